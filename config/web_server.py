"""gunicorn's settings, read by the Procfile's web command (-c).

A sync worker busy with one request past `timeout` is killed mid-answer, and
its reader gets no page. The longest wait a request makes by design is an Ask's
on its language model, bounded by MOMENTUM_ASK_TIMEOUT and followed by the
offline answer; gunicorn's default of 30 s killed it at the default of 30 s
once the question's retrieval was counted, and at any longer one always.
"""

from __future__ import annotations

import math

from config.env import number

# The question's retrieval (AskPDF: its first read of a long PDF) before the
# wait, and the offline answer after it.
ASK_MARGIN = 30

# As config.settings.base reads it.
timeout = math.ceil(number("MOMENTUM_ASK_TIMEOUT", 30.0)) + ASK_MARGIN
