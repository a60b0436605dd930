from __future__ import annotations


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The response is an error in the API's one shape; returns its body."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    # A server error's body gives its request's id to quote.
    keys = {"code", "message", "fields"} | ({"reference"} if status == 500 else set())
    assert {"code", "message"} <= set(body["error"]) <= keys
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]
