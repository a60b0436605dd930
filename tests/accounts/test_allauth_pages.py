"""allauth's account pages, in the site's layout and working end to end."""

from __future__ import annotations

import ast
import gettext
import html
import re
import smtplib
import time
from pathlib import Path
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from allauth.account.models import EmailAddress
from allauth.account.models import EmailConfirmationHMAC
from django.conf import settings
from django.core import mail

from accounts.models import DigestPreferences
from accounts.models import User
from papers.ingest.upsert import upsert_records
from tests.notifications.factories import FAILING_BACKEND
from tests.notifications.factories import FailingBackend
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a much longer new passphrase"
LAYOUT_MARK = '<a class="brand" href="/">Momentum</a>'


def link_in(message) -> str:
    """The path of the one link in an email."""
    (url,) = re.findall(r"https?://\S+", message.body)
    return re.sub(r"^https?://[^/]+", "", url)


def assert_in_our_layout(response) -> None:
    assert response.status_code == 200
    assert LAYOUT_MARK in response.text
    assert 'href="/static/css/site.css"' in response.text
    # The Content-Security-Policy forbids inline scripts and styles.
    assert not re.search(r"<script(?![^>]*\ssrc=)", response.text)
    assert "style=" not in response.text
    assert not re.search(r"\son[a-z]+=", response.text)


@pytest.mark.parametrize(
    "url",
    [
        "/accounts/signup/",
        "/accounts/login/",
        "/accounts/confirm-email/",
        "/accounts/password/reset/",
        "/accounts/password/reset/done/",
        "/accounts/password/reset/key/done/",
    ],
)
def test_entrance_pages_use_our_layout(client, url):
    assert_in_our_layout(client.get(url))


@pytest.mark.parametrize(
    "url",
    [
        "/accounts/logout/",
        "/accounts/password/change/",
        "/accounts/email/",
        "/accounts/reauthenticate/",
    ],
)
def test_signed_in_pages_use_our_layout(reader, verified_alice, url):
    assert_in_our_layout(reader.get(url))


def test_page_title_comes_from_allauth_in_the_sites_words(client):
    response = client.get("/accounts/login/")

    assert re.search(r"<title>\s*Log in\s*· Momentum</title>", response.text)


# allauth's English that locale/en replaces with the site's words.
ALLAUTH_WORDS = (
    "Sign In",
    "Sign Up",
    "Sign Out",
    "sign in",
    "Remember Me",
    "Change Password",
    "Email Addresses",
    "Make Primary",
)


def heading(page: str) -> str:
    return re.search(r"<h1>\s*(.*?)\s*</h1>", page, re.DOTALL).group(1)


def assert_in_the_sites_words(page: str, title: str, words: list[str]) -> None:
    assert heading(page) == title
    for word in words:
        assert word in page
    for theirs in ALLAUTH_WORDS:
        assert theirs not in page


@pytest.mark.parametrize(
    ("url", "title", "words"),
    [
        ("/accounts/login/", "Log in", ["Keep me logged in", ">Sign up</a>"]),
        ("/accounts/signup/", "Sign up", [">Log in</a>"]),
        ("/accounts/password/reset/", "Reset your password", ["Email me a link"]),
    ],
)
def test_entrance_pages_say_what_the_rest_of_the_site_says(client, url, title, words):
    """The header says "Log in" and "Sign up": allauth's "Sign In", "Sign Up"
    and "Remember Me" are the site's words there too (locale/en)."""
    assert_in_the_sites_words(client.get(url).text, title, words)


@pytest.mark.parametrize(
    ("url", "title", "words"),
    [
        ("/accounts/logout/", "Log out", ["Log out of Momentum in this browser?"]),
        ("/accounts/password/change/", "Change password", ["Current password"]),
        ("/accounts/email/", "Email address", ["Change email"]),
    ],
)
def test_account_pages_say_what_the_rest_of_the_site_says(
    reader, verified_alice, url, title, words
):
    assert_in_the_sites_words(reader.get(url).text, title, words)


def test_logging_in_and_out_says_logged(client, verified_alice):
    client.post(
        "/accounts/login/", {"login": verified_alice.email, "password": PASSWORD}
    )
    home = client.get("/").text
    assert f"Logged in as {verified_alice.email}." in home

    client.post("/accounts/logout/")
    assert "You have logged out." in client.get("/").text


def test_labels_read_as_the_sites_own_forms(client):
    """No colon after a label (the ask and search forms have none), and a
    checkbox before its label."""
    page = client.get("/accounts/login/").text

    assert '<label for="id_login">Email</label>' in page
    assert re.search(
        r'<input type="checkbox" name="remember" id="id_remember">\s*'
        r'<label for="id_remember">Keep me logged in</label>',
        page,
    )
    assert ":</label>" not in page


def test_form_errors_render_in_our_form_style(client):
    response = client.post(
        "/accounts/login/", {"login": "nobody@example.com", "password": "nope"}
    )

    assert_in_our_layout(response)
    assert 'class="form' in response.text
    assert 'class="errorlist' in response.text


def test_email_page_shows_the_verified_address_and_how_to_change_it(
    reader, verified_alice
):
    page = reader.get("/accounts/email/").text

    assert "Your email address: <strong>alice@example.com</strong>" in page
    assert "Verified" in page
    assert "Change email" in page
    assert "the new address\n        replaces alice@example.com" in page
    # One address, primary by necessity: nothing to choose between.
    for action in ("Make primary", "Remove", "Resend verification"):
        assert action not in page


def test_an_unverified_address_can_have_its_link_sent_again(reader, alice):
    EmailAddress.objects.create(user=alice, email=alice.email, primary=True)

    page = reader.get("/accounts/email/").text
    sent = reader.post(
        "/accounts/email/", {"email": alice.email, "action_send": ""}, follow=True
    )

    assert "Open the link we mailed there to confirm it." in page
    assert "Resend verification" in page
    assert "Cancel the change" not in page
    assert sent.status_code == 200
    [message] = mail.outbox
    assert message.to == [alice.email]


def test_resending_the_link_too_soon_says_so_and_when(reader, alice):
    """The email page's Resend within the cooldown sent none, and said none."""
    EmailAddress.objects.create(user=alice, email=alice.email, primary=True)
    resend = {"email": alice.email, "action_send": ""}

    reader.post("/accounts/email/", resend, follow=True)
    again = reader.post("/accounts/email/", resend, follow=True)

    assert len(mail.outbox) == 1
    assert (
        "No new link was sent: the last went to alice@example.com less than 3 "
        "minutes ago, and its link still works. For another, press Resend "
        "verification again once 3 minutes have passed since it."
    ) in html.unescape(again.text)
    assert "Confirmation email sent" not in again.text


def test_signup_sends_a_verification_email_whose_link_verifies(client):
    response = client.post(
        "/accounts/signup/",
        {"email": "carol@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert response.status_code == 302
    assert response.url == "/accounts/confirm-email/"
    (message,) = mail.outbox
    assert message.to == ["carol@example.com"]
    assert message.subject == "[Momentum] Confirm your email address"
    # In the site's words, not allauth's "user ... has given your email address".
    assert "given for the account carol@example.com at " in message.body
    assert "If it was not you, ignore this mail" in message.body
    assert "You're receiving this email" not in message.body
    address = EmailAddress.objects.get(email="carol@example.com")
    assert not address.verified

    confirm_url = link_in(message)
    page = client.get(confirm_url)
    assert_in_our_layout(page)
    assert (
        'Confirm that <a href="mailto:carol@example.com">carol@example.com</a> is '
        "your address." in page.text
    )
    assert "is an email address for user" not in page.text
    response = client.post(confirm_url)

    assert response.status_code == 302
    address.refresh_from_db()
    assert address.verified


def test_confirming_in_the_browser_that_signed_up_signs_in(client):
    """The new reader is not asked for the password they have just chosen:
    the link opened where they signed up signs them in, and takes them on to
    the page they signed up from."""
    client.post(
        "/accounts/signup/?next=/topics/",
        {"email": "erin@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    (message,) = mail.outbox

    response = client.post(link_in(message))

    user = User.objects.get(email="erin@example.com")
    assert client.session["_auth_user_id"] == str(user.pk)
    assert response.status_code == 302
    assert response.url == "/topics/"


def test_confirming_elsewhere_confirms_but_does_not_sign_in(client):
    """A link opened in another browser (or by whoever else reads the mail)
    confirms the address and asks for the password."""
    client.post(
        "/accounts/signup/",
        {"email": "frank@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    (message,) = mail.outbox
    client.cookies.clear()

    response = client.post(link_in(message))

    assert EmailAddress.objects.get(email="frank@example.com").verified
    assert "_auth_user_id" not in client.session
    assert response.url == "/accounts/login/"


def test_opening_another_accounts_confirmation_link_signs_no_one_out(
    client, verified_alice
):
    """allauth signed the reader out as the page opened: any still valid
    link, followed from another site, did. Confirming signs them out."""
    client.post(
        "/accounts/signup/",
        {"email": "frank@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )
    (message,) = mail.outbox
    client.post("/accounts/logout/")
    client.post(
        "/accounts/login/", {"login": verified_alice.email, "password": PASSWORD}
    )

    page = client.get(link_in(message))

    assert page.status_code == 200
    assert client.session["_auth_user_id"] == str(verified_alice.pk)
    assert (
        "You are logged in as alice@example.com: confirming this address, another "
        "account&#x27;s, logs you out."
    ) in page.text
    client.post(link_in(message))
    assert EmailAddress.objects.get(email="frank@example.com").verified
    assert client.session.get("_auth_user_id") != str(verified_alice.pk)


def test_the_confirmation_page_says_what_to_do_when_no_mail_comes(client, monkeypatch):
    """No "contact us" with nothing to contact: it says that logging in sends a
    new link, and it does (allauth, at most one every three minutes)."""
    response = client.post(
        "/accounts/signup/",
        {"email": "gina@example.com", "password1": PASSWORD, "password2": PASSWORD},
        follow=True,
    )
    assert "logging in sends a new link" in response.text
    assert "contact us" not in response.text.lower()

    later = time.time() + 4 * 60
    monkeypatch.setattr(time, "time", lambda: later)
    client.post("/accounts/login/", {"login": "gina@example.com", "password": PASSWORD})

    _, second = mail.outbox
    assert second.to == ["gina@example.com"]
    client.post(link_in(second))
    assert EmailAddress.objects.get(email="gina@example.com").verified


def test_logging_in_again_too_soon_for_a_new_link_says_so_and_when(client, monkeypatch):
    """allauth sends a new confirmation link at most once every few minutes;
    a login sooner sent none and said nothing, where the page promises one."""
    client.post(
        "/accounts/signup/",
        {"email": "gina@example.com", "password1": PASSWORD, "password2": PASSWORD},
        follow=True,
    )
    credentials = {"login": "gina@example.com", "password": PASSWORD}

    soon = client.post("/accounts/login/", credentials, follow=True)

    assert len(mail.outbox) == 1
    assert (
        "No new link was sent: the last went to gina@example.com less than 3 "
        "minutes ago, and its link still works. For another, log in again once "
        "3 minutes have passed since it."
    ) in html.unescape(soon.text)
    assert "Confirmation email sent" not in soon.text

    later = time.time() + 4 * 60
    monkeypatch.setattr(time, "time", lambda: later)
    again = client.post("/accounts/login/", credentials, follow=True)

    assert len(mail.outbox) == 2
    assert "No new link was sent" not in again.text


@pytest.mark.parametrize(
    ("error", "told"),
    [
        (
            smtplib.SMTPRecipientsRefused({"hal@example.com": (550, b"no such user")}),
            "The mail server refused the email to hal@example.com (recipient "
            "refused: 550 no such user): check the address.",
        ),
        # The embedded default has no worker to try again later.
        (
            ConnectionRefusedError(111, "Connection refused"),
            "We could not send the email to hal@example.com just now (the mail "
            "server: ConnectionRefusedError: [Errno 111] Connection refused): try "
            "again in a few minutes.",
        ),
    ],
)
def test_a_sign_up_whose_mail_did_not_go_is_told_so_not_that_it_was_sent(
    client, settings, error, told
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = error

    page = client.post(
        "/accounts/signup/",
        {"email": "hal@example.com", "password1": PASSWORD, "password2": PASSWORD},
        follow=True,
    )

    assert told in page.text
    assert "Confirmation email sent" not in page.text
    assert "We have sent you an email" not in page.text
    assert (
        "Your account is made, but the email that confirms its address did not go."
    ) in page.text


def test_a_password_reset_whose_mail_did_not_go_is_not_said_to_be_sent(
    client, settings, alice
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused(
        {alice.email: (550, b"no such user")}
    )

    page = client.post("/accounts/password/reset/", {"email": alice.email}, follow=True)

    assert "The mail server refused the email to alice@example.com" in page.text
    assert "We have sent you an email" not in page.text
    assert "No email went, so there is no link to follow yet" in page.text
    # Another reset, its mail sent: the page says so again.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    again = client.post(
        "/accounts/password/reset/", {"email": alice.email}, follow=True
    )
    assert "We have sent you an email" in again.text


@pytest.mark.parametrize(
    "url", ["/accounts/password/reset/", "/accounts/password/reset/done/"]
)
def test_password_reset_pages_ask_no_one_to_contact_us(client, url):
    assert "contact us" not in client.get(url).text.lower()


def test_login_requires_a_verified_email(client):
    user = User.objects.create_user("dave@example.com", PASSWORD)
    address = EmailAddress.objects.create(
        user=user, email=user.email, verified=False, primary=True
    )
    credentials = {"login": user.email, "password": PASSWORD}

    response = client.post("/accounts/login/", credentials)

    assert response.url == "/accounts/confirm-email/"
    assert "_auth_user_id" not in client.session
    assert len(mail.outbox) == 1

    confirmation = EmailConfirmationHMAC(address)
    client.post(f"/accounts/confirm-email/{confirmation.key}/")
    response = client.post("/accounts/login/", credentials)

    assert response.status_code == 302
    assert response.url == "/"
    assert client.session["_auth_user_id"] == str(user.pk)


def test_password_reset_email_link_sets_a_new_password(client, verified_alice):
    response = client.post("/accounts/password/reset/", {"email": "alice@example.com"})

    assert response.url == "/accounts/password/reset/done/"
    (message,) = mail.outbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "[Momentum] Reset your password"
    assert "asked to reset the password of your account" in message.body
    assert "your password stays as it is" in message.body

    # allauth moves the key from the link into the session, then shows the form.
    response = client.get(link_in(message), follow=True)
    assert_in_our_layout(response)
    assert 'name="password1"' in response.text
    form_url = response.redirect_chain[-1][0]
    response = client.post(
        form_url, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    )

    # The link proved the address: the reader is signed in, not sent to a page
    # that only says the password changed and leaves them to log in again.
    assert response.url == "/"
    assert client.session["_auth_user_id"] == str(verified_alice.pk)
    assert "Password successfully changed." in client.get("/").text
    verified_alice.refresh_from_db()
    assert verified_alice.check_password(NEW_PASSWORD)


NEXT_FIELD = re.compile(r'<input type="hidden" name="next" value="([^"]*)"')


def carried_next(page: str, field: str) -> dict[str, str]:
    """The hidden `next` of the page's form asking for `field` (not of its
    Cancel form, which goes back to the login page)."""
    [form] = [form for form in page.split("</form>") if f'name="{field}"' in form]
    found = NEXT_FIELD.search(form)
    return {"next": html.unescape(found.group(1))} if found else {}


def reset_from_the_login_page(client, login_page: str):
    """Follows the login page's "Forgot your password?" to the mailed link's
    form, and sets a new password there: the response to that."""
    [forgot] = re.findall(r'href="(/accounts/password/reset/[^"]*)"', login_page)
    asking = client.get(html.unescape(forgot)).text
    client.post(
        "/accounts/password/reset/",
        {"email": "alice@example.com", **carried_next(asking, "email")},
    )
    page = client.get(link_in(mail.outbox[-1]), follow=True)
    return client.post(
        page.redirect_chain[-1][0],
        {
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            **carried_next(page.text, "password1"),
        },
    )


def test_a_reset_asked_on_the_way_to_follow_a_topic_comes_back_to_it(
    client, verified_alice
):
    """A visitor who clicked Follow, sent to log in, and forgot the password:
    the reset signed them in to the home page, the follow forgotten."""
    make_topic("Agents", rule="ti:agents", slug="agents")
    sent_to = client.get("/topics/agents/follow/?on=1&next=/topics/agents/")
    login = sent_to["Location"]
    [back] = parse_qs(urlsplit(login).query)["next"]

    response = reset_from_the_login_page(client, client.get(login).text)

    assert back.startswith("/topics/agents/follow/?on=1&")
    assert response.url == back
    assert client.session["_auth_user_id"] == str(verified_alice.pk)


def test_a_reset_carries_no_address_of_another_site(client, verified_alice):
    login_page = client.get("/accounts/login/", {"next": "https://x.org/"}).text

    response = reset_from_the_login_page(client, login_page)

    assert "x.org" not in mail.outbox[-1].body
    assert response.url == "/"


def reset_links(page: str) -> list[str]:
    """The page's links to ask for a reset again, as a browser reads them."""
    found = re.findall(r'href="(/accounts/password/reset/(?:\?[^"]*)?)"', page)
    return [html.unescape(link) for link in found]


def test_asking_for_a_reset_on_the_way_somewhere_says_the_mail_went(
    client, verified_alice
):
    """The form's `next` is for after the reset: asking sent the reader
    straight there, to be sent to log in again, with no word of the mail."""
    make_topic("Agents", rule="ti:agents", slug="agents")
    login = client.get("/topics/agents/follow/?on=1&next=/topics/agents/")["Location"]
    [back] = parse_qs(urlsplit(login).query)["next"]
    [forgot] = reset_links(client.get(login).text)
    asking = client.get(forgot).text

    response = client.post(
        "/accounts/password/reset/",
        {"email": "alice@example.com", **carried_next(asking, "email")},
        follow=True,
    )

    [(done, _)] = response.redirect_chain
    assert urlsplit(done).path == "/accounts/password/reset/done/"
    assert parse_qs(urlsplit(done).query)["next"] == [back]
    assert "We have sent you an email" in response.text
    assert parse_qs(urlsplit(link_in(mail.outbox[-1])).query)["next"] == [back]
    # "or ask for another one", a link that keeps where the reset goes.
    [again] = reset_links(response.text)
    assert parse_qs(urlsplit(again).query)["next"] == [back]


def test_asking_again_after_a_reset_mail_did_not_go_keeps_where_it_goes(
    client, settings, alice
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused(
        {alice.email: (550, b"no such user")}
    )

    page = client.post(
        "/accounts/password/reset/?next=/saved/", {"email": alice.email}, follow=True
    )

    assert "No email went, so there is no link to follow yet" in page.text
    assert reset_links(page.text) == ["/accounts/password/reset/?next=%2Fsaved%2F"]


@pytest.mark.parametrize("next_url", ["/saved/", "https://x.org/"])
def test_a_used_reset_link_offers_a_new_one_that_keeps_where_it_goes(
    client, verified_alice, next_url
):
    """The mailed link keeps `next` (accounts.adapter): so does its page's way
    to a new one when the link was used or is too old; another site's, never."""
    client.post(
        "/accounts/password/reset/", {"email": "alice@example.com", "next": next_url}
    )
    link = link_in(mail.outbox[-1])
    form = client.get(link, follow=True)
    client.post(
        form.redirect_chain[-1][0],
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    client.logout()

    used = client.get(link, follow=True)

    assert heading(used.text) == "This link does not work"
    if next_url == "/saved/":
        assert reset_links(used.text) == ["/accounts/password/reset/?next=%2Fsaved%2F"]
        asking = client.get(reset_links(used.text)[0]).text
        assert carried_next(asking, "email") == {"next": "/saved/"}
    else:
        assert reset_links(used.text) == ["/accounts/password/reset/"]
        assert "x.org" not in used.text


def test_signing_up_with_an_address_that_has_an_account_mails_it_in_our_words(
    client, verified_alice
):
    response = client.post(
        "/accounts/signup/",
        {"email": "alice@example.com", "password1": PASSWORD, "password2": PASSWORD},
    )

    # The page is the one any sign-up gets: it does not tell who has an account.
    assert response.url == "/accounts/confirm-email/"
    (message,) = mail.outbox
    assert message.to == ["alice@example.com"]
    assert message.subject == "[Momentum] You already have an account"
    assert "tried to sign up with alice@example.com, which already has an" in (
        message.body
    )
    assert "/accounts/password/reset/" in link_in(message)
    assert "nothing about your account changed" in message.body
    assert "password forgotten procedure" not in message.body


def test_a_reset_for_an_address_without_an_account_mails_it_in_our_words(client):
    response = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})

    assert response.url == "/accounts/password/reset/done/"
    (message,) = mail.outbox
    assert message.subject == "[Momentum] No account with this address"
    assert "reset the password of the account nobody@example.com, but" in message.body
    assert "If it was not you, ignore this mail." in message.body
    assert "/accounts/signup/" in link_in(message)
    assert "in our database" not in message.body


@pytest.mark.parametrize(
    ("url", "email", "path"),
    [
        (
            "/accounts/password/reset/",
            "alice@example.com",
            "/accounts/password/reset/key/",
        ),
        ("/accounts/password/reset/", "nobody@example.com", "/accounts/signup/"),
        ("/accounts/signup/", "alice@example.com", "/accounts/password/reset/"),
        ("/accounts/signup/", "carol@example.com", "/accounts/confirm-email/"),
    ],
)
def test_account_mails_link_to_the_site_whatever_host_was_asked(
    client, verified_alice, settings, url, email, path
):
    """allauth built them from the request's Host: a reset asked through
    another of the server's names mailed a link to that name, one the asker
    chooses."""
    settings.ALLOWED_HOSTS = ["testserver", "other.example"]
    settings.MOMENTUM_SITE_URL = "https://momentum.example"
    data = {"email": email, "password1": PASSWORD, "password2": PASSWORD}

    client.post(url, data, HTTP_HOST="other.example")

    (message,) = mail.outbox
    (link,) = re.findall(r"https?://\S+", message.body)
    assert link.startswith(f"https://momentum.example{path}")
    assert "other.example" not in message.body


def test_an_inactive_account_is_told_whom_to_write_to_not_that_it_has_none(
    client, verified_alice, settings
):
    """Logging in said only "inactive", a reset mailed that the address had no
    account, and signing up that it had one: a circle with no way out."""
    settings.MOMENTUM_CONTACT_EMAIL = "operator@momentum.example"
    User.objects.filter(pk=verified_alice.pk).update(is_active=False)

    page = client.post(
        "/accounts/login/",
        {"login": verified_alice.email, "password": PASSWORD},
        follow=True,
    )
    client.post("/accounts/password/reset/", {"email": verified_alice.email})

    assert_in_our_layout(page)
    assert "the site's operator made it so" in page.text
    assert 'href="mailto:operator@momentum.example"' in page.text
    (message,) = mail.outbox
    assert message.subject == "[Momentum] Your account is inactive"
    assert "write to operator@momentum.example" in message.body
    assert "no account" not in message.body


def test_bad_reset_link_says_so_in_our_layout(client, verified_alice):
    response = client.get("/accounts/password/reset/key/1-bad-key/", follow=True)

    assert_in_our_layout(response)
    assert heading(response.text) == "This link does not work"


def test_password_change(reader, verified_alice):
    response = reader.post(
        "/accounts/password/change/",
        {"oldpassword": PASSWORD, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
        follow=True,
    )

    assert_in_our_layout(response)
    verified_alice.refresh_from_db()
    assert verified_alice.check_password(NEW_PASSWORD)


def test_logout_page_signs_out(reader, verified_alice):
    response = reader.post("/accounts/logout/")

    assert response.status_code == 302
    assert "_auth_user_id" not in reader.session


def test_too_many_password_resets_get_our_429_page(client, verified_alice):
    for _ in range(5):
        client.post("/accounts/password/reset/", {"email": verified_alice.email})

    response = client.post("/accounts/password/reset/", {"email": verified_alice.email})

    assert response.status_code == 429
    assert LAYOUT_MARK in response.text
    assert "Too many attempts" in response.text


def test_allauths_limits_count_the_address_the_proxy_saw(
    client, verified_alice, settings
):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}

    def reset(forwarded: str) -> int:
        return client.post(
            "/accounts/password/reset/",
            {"email": f"{forwarded}@example.org"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=f"{forwarded}, 198.51.100.7",
        ).status_code

    # 20 resets a minute per address: a made-up X-Forwarded-For does not reset it.
    statuses = [reset(f"10.9.9.{n}") for n in range(21)]

    assert statuses[:20] == [302] * 20
    assert statuses[20] == 429


def po_entries(path: Path) -> dict[str, str]:
    """msgid -> msgstr of a .po file (its quoted pieces joined), header left out."""
    entries: dict[str, str] = {}
    for block in path.read_text().split("\n\n"):
        parts: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line.startswith(("msgid ", "msgstr ")):
                key, line = line.split(" ", 1)
                parts[key] = ""
            if key and line.startswith('"'):
                parts[key] += ast.literal_eval(line)
        if parts.get("msgid"):
            entries[parts["msgid"]] = parts["msgstr"]
    return entries


def test_the_compiled_catalog_says_what_the_po_file_says():
    """django.mo is committed (no gettext needed to run the site): a .po edited
    without `make messages` fails here."""
    folder = settings.LOCALE_PATHS[0] / "en" / "LC_MESSAGES"
    with (folder / "django.mo").open("rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)

    entries = po_entries(folder / "django.po")
    assert "Sign In" in entries
    assert {msgid: catalog.gettext(msgid) for msgid in entries} == entries


def notice(page: str) -> str | None:
    found = re.search(r'<li class="info">([^<]*)</li>', page)
    return found and found.group(1)


@pytest.mark.parametrize(
    ("clicked", "reason"),
    [
        ("/topics/agents/follow/?on=1&next=/topics/agents/", "follow a topic"),
        ("/papers/2606.00001/save/?on=1", "save papers"),
        ("/saved/", "see your saved papers"),
        ("/digest/preview/?digest=7", "read your digest"),
        ("/settings/delete/", "see your settings"),
        ("/settings/data/", "download your data"),
    ],
)
def test_a_visitor_sent_to_log_in_is_told_why(client, db, clicked, reason):
    make_topic("Agents", rule="ti:agents", slug="agents")
    upsert_records([paper_record("2606.00001")])
    # Where a Follow or Save button, or a page of one's own, sends a visitor.
    sent_to = client.get(clicked)["Location"]

    logging_in = client.get(sent_to).text
    signing_up = client.get(sent_to.replace("/login/", "/signup/")).text

    assert notice(logging_in) == f"Log in to {reason}."
    assert notice(signing_up) == f"Sign up to {reason}."


def test_the_search_pages_log_in_link_says_it_is_to_save_the_search(client, db):
    search = client.get("/search/", {"q": "reward hacking"}).text
    [login] = re.findall(
        r'href="(/accounts/login/\?next=[^"]+)">Log in</a> to save', search
    )

    assert notice(client.get(login).text) == "Log in to save this search."


# Home, a topic or a paper page (a Flag button comes back to its paper): open
# to all, so why the visitor logs in is not known; another host, or no page.
@pytest.mark.parametrize(
    "next_url",
    ["", "/", "/topics/agents/", "/no/such/page/", "https://x.org/saved/"],
)
def test_the_login_page_gives_no_reason_it_does_not_know(client, db, next_url):
    page = client.get("/accounts/login/", {"next": next_url} if next_url else {}).text

    assert notice(page) is None


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("Europe/Berlin", "Europe/Berlin"),
        ("Mars/Olympus_Mons", "UTC"),  # not a zone: the default stands
        ("", "UTC"),  # no JavaScript
        # Hand-made: the sign-up goes on with the default, never a hidden error.
        ("Europe/" + "x" * 80, "UTC"),
        ("Europe/Berlin\x00", "UTC"),
        # tzdata's names of no place: the server's own zone, and "Factory".
        ("localtime", "UTC"),
        ("Factory", "UTC"),
    ],
)
def test_signing_up_keeps_the_browsers_time_zone_for_the_digest(client, sent, kept):
    page = client.get("/accounts/signup/").text
    response = client.post(
        "/accounts/signup/",
        {
            "email": "carol@example.com",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "time_zone": sent,
        },
    )

    # The form carries it hidden, for site.js to fill in.
    assert '<input type="hidden" name="time_zone"' in page
    assert response.status_code == 302
    user = User.objects.get(email="carol@example.com")
    assert DigestPreferences.objects.for_user(user).time_zone == kept


def header_links(page: str) -> list[str]:
    header = page[: page.index("</header>")]
    return re.findall(r'href="(/accounts/(?:login|signup)/[^"]*)"', header)


def test_the_headers_log_in_links_come_back_to_the_page(client, db):
    make_topic("Agents", rule="ti:agents", slug="agents")
    back = "?next=%2Ftopics%2Fagents%2F%3Fpage%3D1"

    for _ in range(2):  # rendered, then the visitors' kept copy
        topic = client.get("/topics/agents/?page=1").text
        assert header_links(topic) == [
            f"/accounts/login/{back}",
            f"/accounts/signup/{back}",
        ]
    # Another page's copy, its own; home needs none (logging in lands there).
    assert header_links(client.get("/topics/").text)[0].endswith("%2Ftopics%2F")
    assert header_links(client.get("/").text) == [
        "/accounts/login/",
        "/accounts/signup/",
    ]
    # On the login page, to where it goes back.
    login = client.get("/accounts/login/", {"next": "/saved/"}).text
    assert header_links(login) == [
        "/accounts/login/?next=%2Fsaved%2F",
        "/accounts/signup/?next=%2Fsaved%2F",
    ]
    # No page of its own, nor an error's (a 404's address may hold a secret).
    for address in ("/accounts/login/", "/feed/0123456789.atom"):
        assert header_links(client.get(address).text) == [
            "/accounts/login/",
            "/accounts/signup/",
        ]
