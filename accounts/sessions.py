"""Sessions in the database, read through the cache (SESSION_ENGINE).

Django's cached_db store costs no database round trip while the cache holds
the session, but raises when the cache is unreachable on a database read
(it stores what it read) and on logout. The database holds every session, so
this store goes on without the cache instead: a request never fails because
the cache is down.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.sessions.backends import cached_db
from django.contrib.sessions.backends.db import SessionStore as DatabaseStore
from django.core.cache.backends.base import BaseCache

logger = logging.getLogger(__name__)


class SessionStore(cached_db.SessionStore):
    _cache: BaseCache  # set by cached_db.SessionStore.__init__; not in the stubs

    def load(self) -> dict[str, Any]:
        try:
            data = self._cache.get(self.cache_key)
        except Exception:
            logger.warning("session cache unavailable", exc_info=True)
            return DatabaseStore.load(self)
        if data is not None:
            return data
        stored = self._get_session_from_db()  # type: ignore[attr-defined]
        if stored is None:
            return {}
        data = self.decode(stored.session_data)
        try:
            self._cache.set(
                self.cache_key, data, self.get_expiry_age(expiry=stored.expire_date)
            )
        except Exception:
            logger.warning("session cache unavailable", exc_info=True)
        return data

    def exists(self, session_key: str) -> bool:
        try:
            return super().exists(session_key)
        except Exception:
            return DatabaseStore.exists(self, session_key)

    def delete(self, session_key: str | None = None) -> None:
        key = session_key or self.session_key
        DatabaseStore.delete(self, session_key)
        if key is None:
            return
        try:
            self._cache.delete(self.cache_key_prefix + key)
        except Exception:
            # A cached copy would outlive the row until it expires.
            logger.exception("could not remove a session from the cache")
