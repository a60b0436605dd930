"""The Procfile's web server under a language model that does not answer: the
Ask page's wait for it is bounded (MOMENTUM_ASK_TIMEOUT), and the server lets
that wait end with the offline answer."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import urllib.request

import pytest
from django.db import connection

from tests.integration.smtp_server import free_port
from tests.integration.test_access_log import BASE_DIR
from tests.integration.test_access_log import _answers
from tests.integration.test_access_log import web_command
from tests.waiting import wait_for


def silent_provider(listener: socket.socket, held: list[socket.socket]) -> None:
    """Takes each connection and never answers (a model endpoint that hangs)."""
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:  # closed: the test is over
            return
        held.append(conn)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("corpus")
def test_a_model_that_never_answers_gets_the_offline_answer_not_a_killed_worker(
    tmp_path,
):
    """The wait of MOMENTUM_ASK_TIMEOUT and the question's retrieval outlasted
    gunicorn's own limit on a request (30 s): the worker was killed mid-answer,
    and the reader got no page (a proxy's 502), not the offline answer. So was
    every answer past 30 s of an operator who gave a slow model more time, and,
    at the default 30 s, a question whose retrieval took a while (AskPDF's
    first read of a long PDF)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=silent_provider, args=(listener, held), daemon=True).start()
    database = connection.settings_dict
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MOMENTUM_ASK")},
        "PYTHONPATH": str(BASE_DIR),
        "DATABASE_URL": "postgres://{USER}@{HOST}:{PORT}/{NAME}".format(**database),
        "MOMENTUM_ASK_API_BASE": f"http://127.0.0.1:{listener.getsockname()[1]}/v1",
        "MOMENTUM_ASK_MODEL": "m",
        "MOMENTUM_ASK_TIMEOUT": "32",
    }
    log = tmp_path / "web.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            web_command(port), cwd=BASE_DIR, env=env, stdout=out, stderr=out
        )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: _answers(f"{base}/robots.txt"), timeout=60)
        url = f"{base}/topics/rl-for-llm-agents/ask/?q=which+agents"
        try:
            with urllib.request.urlopen(url, timeout=120) as response:
                status, page = response.status, response.read().decode()
        except OSError as exc:
            status, page = None, repr(exc)
    finally:
        server.terminate()
        server.wait(timeout=30)
        listener.close()
        for conn in held:
            conn.close()

    assert status == 200, (page, log.read_text()[-2000:])
    assert "did not answer within 32 seconds" in page
