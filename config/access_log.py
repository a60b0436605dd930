"""gunicorn's access log without the credentials some addresses carry.

A private feed's key, a digest's view key, an unsubscribe token and allauth's
confirmation and password-reset keys are in their addresses, since a feed
reader or a mail's link has nothing else to carry them; and a page opened from
one sends that address on as its Referer. Logs are kept longer and read by
more people than any of these should be: the access log writes them hidden.
The Procfile's web command names this class (--logger-class).
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

from gunicorn.glogging import Logger
from gunicorn.http.message import Request
from gunicorn.http.wsgi import Response

if TYPE_CHECKING:
    from gunicorn.glogging import _AtomsDict

HIDDEN = "[hidden]"
# The part of an address that is a credential: in a path, in a query, and in
# a query within a query (the login's ?next= an unsigned reader is sent to).
CREDENTIALS = re.compile(
    r"(?<=/feed/)[^/?#\s]+(?=\.atom)"
    r"|(?<=/unsubscribe/)[^/?#\s]+"
    r"|(?<=/accounts/confirm-email/)[^/?#\s]+"
    r"|(?<=/accounts/password/reset/key/)[^/?#\s]+"
    r"|(?<=[?&]key=)[^&#\s]+|(?<=[?&]token=)[^&#\s]+"
    r"|(?:(?<=%3Fkey%3D)|(?<=%26key%3D)|(?<=%3Ftoken%3D)|(?<=%26token%3D))"
    r"(?:(?!%26)[^&#\s])+",
    re.IGNORECASE,
)
# The atoms that hold an address: the request line, its path, its query and
# the Referer, also as a header's atom (a query's atom is without its "?").
ADDRESSES = ("r", "U", "q", "f", "{referer}i")


def hidden(address: str) -> str:
    return CREDENTIALS.sub(HIDDEN, address)


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
            if isinstance(text := values.get(name), str):
                values[name] = hidden(f"?{text}")[1:] if name == "q" else hidden(text)
        return atoms
