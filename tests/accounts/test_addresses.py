"""Whose an email address is (accounts.addresses), changing it, and the
notices of changes to an account."""

from __future__ import annotations

import re
from unittest import mock

import pytest
from allauth.account.models import EmailAddress
from allauth.account.models import EmailConfirmationHMAC
from django.core import mail
from django.core.cache import cache
from django.test import Client
from kombu.exceptions import OperationalError

from accounts.feed_tokens import create_feed
from accounts.models import DigestPreferences
from accounts.models import User
from accounts.tokens import create_token
from accounts.tokens import get_token
from tests.accounts.factories import verified
from tests.notifications.factories import FAILING_BACKEND
from tests.notifications.factories import FailingBackend

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a much longer new passphrase"


def link_in(message) -> str:
    """The path of the first link in an email."""
    url = re.findall(r"https?://\S+", message.body)[0]
    return re.sub(r"^https?://[^/]+", "", url)


def logged_in(user: User) -> Client:
    """A client that logged in, and gave its password again just now, as
    changing the address asks."""
    client = Client()
    response = client.post(
        "/accounts/login/", {"login": user.email, "password": PASSWORD}
    )
    assert response.status_code == 302
    client.post("/accounts/reauthenticate/", {"password": PASSWORD})
    return client


def sign_up(client: Client, email: str):
    return client.post(
        "/accounts/signup/",
        {"email": email, "password1": PASSWORD, "password2": PASSWORD},
    )


def change_to(client: Client, email: str):
    return client.post("/accounts/email/", {"action_add": "", "email": email})


@pytest.fixture
def requester(verified_alice) -> Client:
    """alice, who asked to change her address to carol's and never confirmed."""
    client = logged_in(verified_alice)
    change_to(client, "carol@example.com")
    mail.outbox.clear()
    # Some minutes later: allauth mails one address at most once in three.
    cache.clear()
    return client


def test_an_address_only_asked_for_by_another_account_can_sign_up(
    client, requester, verified_alice
):
    response = sign_up(client, "carol@example.com")

    assert response.url == "/accounts/confirm-email/"
    carol = User.objects.get(email="carol@example.com")
    (message,) = mail.outbox
    assert message.to == ["carol@example.com"]
    assert message.subject == "[Momentum] Confirm your email address"
    # alice's request is withdrawn: confirming it would give two accounts one
    # address.
    assert list(EmailAddress.objects.filter(email="carol@example.com")) == [
        EmailAddress.objects.get(user=carol)
    ]
    assert EmailAddress.objects.get(user=verified_alice).email == "alice@example.com"


def test_a_reset_never_goes_to_an_account_that_only_asked_for_the_address(
    client, requester, verified_alice
):
    client.post("/accounts/password/reset/", {"email": "carol@example.com"})

    (message,) = mail.outbox
    assert message.subject == "[Momentum] No account with this address"
    assert "/accounts/signup/" in link_in(message)


def test_a_reset_goes_to_the_account_whose_own_address_it_is(client, verified_alice):
    client.post("/accounts/password/reset/", {"email": "ALICE@example.com"})

    (message,) = mail.outbox
    assert message.subject == "[Momentum] Reset your password"
    assert message.to == ["alice@example.com"]


def test_an_address_another_account_owns_is_answered_as_any_other(verified_alice, bob):
    """The email page told any reader who had signed up whether an address has
    an account ("This address belongs to another account."), which sign-up and
    reset take care never to tell. It answers as for a free address; the owner
    is told, and no link that could confirm it is mailed."""
    client = logged_in(verified_alice)

    response = change_to(client, "bob@example.com")
    page = client.get("/accounts/email/").text

    assert response.status_code == 302
    assert "Changing to <strong>bob@example.com</strong>" in page
    assert "another account" not in page
    (notice,) = mail.outbox
    assert notice.to == ["bob@example.com"]
    assert notice.subject == "[Momentum] Your address was given for another account"
    assert "It already belongs to your account, so nothing changed" in notice.body
    assert "/accounts/confirm-email/" not in notice.body
    # Resending sends the notice again, never a confirmation.
    cache.clear()
    client.post("/accounts/email/", {"action_send": "", "email": "bob@example.com"})
    assert [m.subject for m in mail.outbox] == [notice.subject] * 2
    assert "/accounts/confirm-email/" not in mail.outbox[-1].body
    verified_alice.refresh_from_db()
    assert verified_alice.email == "alice@example.com"


def test_changing_the_address_replaces_it_once_confirmed_and_tells_the_old_one(
    verified_alice,
):
    client = logged_in(verified_alice)

    change_to(client, "alice@work.example")
    page = client.get("/accounts/email/").text
    (confirm,) = mail.outbox
    assert confirm.to == ["alice@work.example"]
    assert (
        "Someone asked to change the address of the account alice@example.com at "
        in confirm.body
    )
    assert "this address replaces alice@example.com for logging in" in confirm.body
    assert "Changing to <strong>alice@work.example</strong>" in page
    assert "Cancel the change" in page
    # Until then, nothing changed.
    verified_alice.refresh_from_db()
    assert verified_alice.email == "alice@example.com"

    client.post(link_in(confirm))

    verified_alice.refresh_from_db()
    assert verified_alice.email == "alice@work.example"
    assert [a.email for a in EmailAddress.objects.filter(user=verified_alice)] == [
        "alice@work.example"
    ]
    notice = mail.outbox[-1]
    assert notice.to == ["alice@example.com"]
    assert notice.subject == "[Momentum] Your email address was changed"
    assert (
        "Your account's address was changed from alice@example.com to "
        "alice@work.example: it now logs in" in notice.body
    )
    # Not a reset link: this address no longer opens the account.
    assert "If it was not, write to operator@momentum.localhost at once" in notice.body
    assert "/accounts/password/reset/" not in notice.body


def test_a_changed_password_is_told_to_the_account(verified_alice, settings):
    settings.MOMENTUM_CONTACT_EMAIL = "help@momentum.example"
    settings.DEFAULT_FROM_EMAIL = "Momentum <digest@momentum.example>"
    DigestPreferences.objects.update_or_create(
        user=verified_alice, defaults={"time_zone": "Pacific/Kiritimati"}
    )
    client = logged_in(verified_alice)

    client.post(
        "/accounts/password/change/",
        {"oldpassword": PASSWORD, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )

    (notice,) = mail.outbox
    assert notice.to == ["alice@example.com"]
    assert notice.subject == "[Momentum] Your password was changed"
    assert "Your password has been changed." in notice.body
    assert "From: 127.0.0.1" in notice.body
    assert "If it was not, choose a new password now" in notice.body
    assert link_in(notice) == "/accounts/password/reset/"
    # In the reader's time zone, as every other time the site shows them.
    assert re.search(r"When: .* \d\d:\d\d \(Pacific/Kiritimati\)\n", notice.body)
    # Sent as digests are: a reply reaches the operator the notice names.
    assert notice.reply_to == ["help@momentum.example"]
    message = notice.message()
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["Message-ID"].endswith("@momentum.example>")


def test_a_stored_zone_the_server_no_longer_knows_reads_as_utc(verified_alice):
    """After a tzdata upgrade that moves older names out (Debian's
    tzdata-legacy), the password was changed, then the page was a 500 and no
    notice went."""
    DigestPreferences.objects.update_or_create(
        user=verified_alice, defaults={"time_zone": "US/Pacific-New"}
    )
    client = logged_in(verified_alice)

    response = client.post(
        "/accounts/password/change/",
        {"oldpassword": PASSWORD, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )

    assert response.status_code == 302
    (notice,) = mail.outbox
    assert re.search(r"When: .* \d\d:\d\d \(UTC\)\n", notice.body)


def test_changing_the_address_asks_for_the_password_then_does_it(
    reader, verified_alice
):
    response = change_to(reader, "alice@work.example")

    assert response.status_code == 302
    assert response.url.startswith("/accounts/reauthenticate/")
    assert not EmailAddress.objects.filter(email="alice@work.example")
    assert not mail.outbox
    asked = reader.get(response.url).text
    assert "This changes your account, so we ask for your password again." in asked
    assert "sign-in code" not in asked  # the site logs in by password alone

    reader.post(response.url, {"password": PASSWORD})

    assert EmailAddress.objects.filter(email="alice@work.example", verified=False)
    (confirm,) = mail.outbox
    assert confirm.to == ["alice@work.example"]


def test_an_address_too_long_to_keep_is_refused_not_cut_short(client):
    local, domain = "a" * 64, ".".join(["b" * 60] * 4) + ".org"
    address = f"{local}@{domain}"
    assert 254 < len(address) <= 320

    response = sign_up(client, address)

    assert response.status_code == 200
    assert "An email address has at most 254 characters." in response.text
    assert not User.objects.exists()
    assert not mail.outbox


def test_a_used_confirmation_link_does_not_say_it_expired(client, alice):
    address = EmailAddress.objects.create(user=alice, email=alice.email, primary=True)
    key = EmailConfirmationHMAC(address).key
    client.post(f"/accounts/confirm-email/{key}/")
    assert EmailAddress.objects.get(pk=address.pk).verified

    page = client.get(f"/accounts/confirm-email/{key}/").text

    assert "This link does not work any more: it has been used, or it is too" in page
    assert "expired or is invalid" not in page


def test_a_confirmed_change_withdraws_other_accounts_requests_for_it(
    requester, verified_alice, bob
):
    """alice asked for carol@example.com and never confirmed; bob changes to it
    and confirms: alice's request goes, and with it her page's Resend."""
    verified(bob)
    client = logged_in(bob)
    change_to(client, "carol@example.com")
    (confirm,) = mail.outbox

    client.post(link_in(confirm))

    assert [a.user for a in EmailAddress.objects.filter(email="carol@example.com")] == [
        bob
    ]
    assert "Changing to" not in requester.get("/accounts/email/").text


def test_a_sign_up_that_loses_the_race_for_its_address_is_answered_as_taken(
    client, monkeypatch
):
    """Two sign-ups with one address at once (a double click): both find it
    free, one stores it first. The other is answered as any sign-up of a taken
    address is (the same page, a mail saying the account exists), not a 500."""
    from accounts.addresses import OwnersSignupForm

    checked = OwnersSignupForm.clean

    def first_click_lands_meanwhile(form):
        cleaned = checked(form)
        User.objects.create_user("carol@example.com", "the first click's")
        return cleaned

    monkeypatch.setattr(OwnersSignupForm, "clean", first_click_lands_meanwhile)

    response = sign_up(client, "carol@example.com")

    assert (response.status_code, response.url) == (302, "/accounts/confirm-email/")
    assert User.objects.filter(email__iexact="carol@example.com").count() == 1
    (message,) = mail.outbox
    assert message.subject == "[Momentum] You already have an account"


def test_a_new_password_ends_the_api_token_and_the_private_feed(client, verified_alice):
    """They open the account without the password: made by someone who had it
    a while, they kept working after the reset the warning mail asks for."""
    for change in ("changed", "reset"):
        create_token(user=verified_alice)
        key = create_feed(verified_alice)
        assert client.get(f"/feed/{key}.atom").status_code == 200
        mail.outbox.clear()

        if change == "changed":
            signed = logged_in(verified_alice)
            done = signed.post(
                "/accounts/password/change/",
                {"oldpassword": PASSWORD, "password1": PASSWORD, "password2": PASSWORD},
                follow=True,
            )
        else:
            client.post("/accounts/password/reset/", {"email": "alice@example.com"})
            form = client.get(link_in(mail.outbox[0]), follow=True).redirect_chain[-1][
                0
            ]
            done = client.post(
                form, {"password1": PASSWORD, "password2": PASSWORD}, follow=True
            )

        assert get_token(user=verified_alice) is None
        assert client.get(f"/feed/{key}.atom").status_code == 404
        assert "no longer work: make new ones on your settings page" in done.text
        notice = mail.outbox[-1]
        assert f"Your password has been {change}." in notice.body
        assert "Your API token and your private feed's address" in notice.body
        client.logout()


def test_a_sign_up_with_a_taken_address_hashes_its_password_as_a_new_one_does(
    client, verified_alice, monkeypatch
):
    """The time a password takes to hash told which addresses have an account."""
    hashed = []
    monkeypatch.setattr(
        "accounts.addresses.make_password", lambda raw: hashed.append(raw)
    )

    sign_up(client, "alice@example.com")

    assert hashed == [PASSWORD]


def test_a_mail_the_broker_could_not_take_is_logged_without_its_text(
    verified_alice, settings, caplog
):
    """The mail server and the broker both down: the warning of the task not
    sent wrote the whole message into the log, its text, HTML and address
    (a reset's link hidden only by the console's filter), and said a sweep
    would send it, when no sweep keeps account mail."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    refused = OperationalError("Error 111 connecting to redis:6379")
    with (
        mock.patch("accounts.tasks.send_account_mail.apply_async", side_effect=refused),
        caplog.at_level("INFO"),
    ):
        page = Client().post(
            "/accounts/password/reset/", {"email": "alice@example.com"}, follow=True
        )

    assert "try again in a few minutes" in page.text
    [queue] = [r for r in caplog.records if r.name == "core.queue"]
    assert queue.levelname == "WARNING"
    assert "send_account_mail" in queue.getMessage()
    assert "sweep" not in queue.getMessage()
    assert "/accounts/password/reset/key/" not in caplog.text
    assert "Password Reset" not in caplog.text
