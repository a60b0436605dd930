"""gunicorn's access log without the credentials some addresses carry.

A private feed's key, a digest's view key, an unsubscribe token and allauth's
confirmation and password-reset keys are in their addresses, since a feed
reader or a mail's link has nothing else to carry them; and a page opened from
one sends that address on as its Referer. Logs are kept longer and read by
more people than any of these should be: the access log writes them hidden.
The Procfile's web command names AccessLogger (--logger-class); the
console handler of LOGGING filters the rest of the logs alike, and gives each
line the id of its request (RequestId).
"""

from __future__ import annotations

import logging
import re
from collections.abc import MutableMapping
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import cast
from urllib.parse import quote
from urllib.parse import unquote

from django_guid import get_guid
from gunicorn.glogging import Logger
from gunicorn.http.message import Request
from gunicorn.http.wsgi import Response

if TYPE_CHECKING:
    from gunicorn.glogging import _AtomsDict

HIDDEN = "[hidden]"
# The part of an address that is a credential, in a path or a query.
CREDENTIALS = re.compile(
    r"(?<=/feed/)[^/?#\s]+(?=\.atom)"
    r"|(?<=/unsubscribe/)[^/?#\s]+"
    r"|(?<=/accounts/confirm-email/)[^/?#\s]+"
    r"|(?<=/accounts/password/reset/key/)[^/?#\s]+"
    r"|(?<=[?&]key=)[^&#\s]+|(?<=[?&]token=)[^&#\s]+",
    re.IGNORECASE,
)
# The atoms that hold an address: the request line, its path, its query and
# the Referer, also as a header's atom.
ADDRESSES = ("U", "q", "f", "{referer}i")
# What an address keeps unencoded in the log: no space, quote or control.
KEPT = "/?&=:;,+@!$'()*[]~#"


def hidden(text: str) -> str:
    """The text with the credentials of the addresses in it hidden."""
    return CREDENTIALS.sub(HIDDEN, text)


def hidden_address(address: str) -> str:
    """An address with its credentials hidden, read percent-decoded as the
    site routes it (/feed/KEY%2Eatom, a login's next=/digest/...%26key%3D...),
    then written encoded again, so that no quote or space of it breaks the
    log's line."""
    return quote(hidden(unquote(address)), safe=KEPT)


class HiddenCredentials(logging.Filter):
    """Logging's filter (LOGGING's console handler): Django logs the address
    of each 4xx and 5xx answer ("Gone: /unsubscribe/<token>/")."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (shown := hidden(message)) != message:
            record.msg, record.args = shown, ()
        return True


class RequestId(logging.Filter):
    """Logging's filter: the id of the request or task a line is logged in
    (django-guid's; settings' REQUEST IDS), "-" outside one."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = get_guid() or "-"
        return True


class AccessLogger(Logger):
    def atoms(
        self,
        resp: Response,
        req: Request,
        environ: MutableMapping[str, Any],
        request_time: timedelta,
    ) -> _AtomsDict:
        atoms = super().atoms(resp, req, environ, request_time)
        # Header atoms ({referer}i) are keys the stubs' TypedDict does not name.
        values = cast(dict[str, Any], atoms)
        for name in ADDRESSES:
            if isinstance(text := values.get(name), str) and text != "-":
                # A query's atom is without its "?", which the patterns read.
                values[name] = (
                    hidden_address(f"?{text}")[1:]
                    if name == "q"
                    else hidden_address(text)
                )
        method, uri, protocol = (
            environ["REQUEST_METHOD"],
            environ["RAW_URI"],
            environ["SERVER_PROTOCOL"],
        )
        values["r"] = f"{method} {hidden_address(uri)} {protocol}"
        return atoms
