"""A real SMTP server (aiosmtpd) for tests, with scriptable replies."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from email import message_from_bytes
from email import policy
from email.message import EmailMessage

from aiosmtpd.controller import Controller


@dataclass
class Handler:
    """Accepts mail, unless `rcpt_replies` says otherwise for the next
    recipients (one reply each, e.g. "451 4.3.0 Try again later")."""

    messages: list[EmailMessage] = field(default_factory=list)
    rcpt_replies: list[str] = field(default_factory=list)
    rcpt_count: int = 0
    # Hold the RCPT of recipient number `hold_at` (1-based) until `release` is
    # set, signalling `held`: a sender can be killed mid-message.
    hold_at: int | None = None
    # Or take message number `accept_then_hold` (1-based) for delivery and hold
    # the reply to it: a sender killed then never learns it was accepted.
    accept_then_hold: int | None = None
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    async def handle_RCPT(self, server, session, envelope, address, options):
        self.rcpt_count += 1
        if self.rcpt_count == self.hold_at:
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        if self.rcpt_replies:
            return self.rcpt_replies.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        message = message_from_bytes(envelope.original_content, policy=policy.default)
        self.messages.append(message)  # type: ignore[arg-type]
        if len(self.messages) == self.accept_then_hold:
            self.held.set()
            while not self.release.is_set():
                await asyncio.sleep(0.05)
        return "250 Message accepted for delivery"

    def message_ids(self) -> Counter[str]:
        # A long Message-ID is folded onto its own line: strip the fold.
        return Counter(str(m["Message-ID"]).strip() for m in self.messages)

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"] == address]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server() -> Iterator[tuple[Handler, int]]:
    handler = Handler()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield handler, controller.port
    finally:
        handler.release.set()
        controller.stop()


def body(message: EmailMessage, subtype: str) -> str:
    part = message.get_body(preferencelist=(subtype,))
    assert part is not None, f"no text/{subtype} part"
    return part.get_content()
