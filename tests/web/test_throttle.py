"""Login throttling: per username and per client address, on the app's clock (no sleeping)."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from fastapi.testclient import TestClient

from web.throttle import IN_FLIGHT_WAIT, LoginThrottle

WRONG = "senha-errada-123"
REFUSED = "Muitas tentativas de acesso. Tente novamente em"
T0 = dt.datetime(2026, 12, 16, 15, 0, tzinfo=dt.UTC)


@pytest.fixture
def client_at(app):
    """client_at("203.0.113.5") -> a TestClient whose requests come from that address."""
    clients = []

    def make(ip: str = "testclient", *, application=None) -> TestClient:
        client = TestClient(application or app, base_url="https://testserver", follow_redirects=False,
                            client=(ip, 50000))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def checks(monkeypatch):
    """How many passwords the app has checked (argon2 verifications through `authenticate`)."""
    import web.auth

    calls = []
    real = web.auth.authenticate

    def counting(session, username, password):
        calls.append(username)
        return real(session, username, password)

    monkeypatch.setattr(web.auth, "authenticate", counting)
    return calls


def login(kit, client: TestClient, username: str, password: str):
    client.cookies.clear()  # logged out, as after an earlier success
    page = client.get("/entrar")
    token = kit.CSRF.search(page.text).group(1)
    return client.post("/entrar", data={"username": username, "password": password, "csrf_token": token})


def refused_minutes(response) -> int:
    assert response.status_code == 429, response.text
    match = re.search(REFUSED + r" (\d+) minutos?\.", response.text)
    assert match, response.text
    return int(match.group(1))


def test_five_wrong_passwords_lock_the_username_for_15_minutes(kit, client_at, checks):
    client = client_at()
    for _ in range(5):
        response = login(kit, client, "fiscal", WRONG)
        assert response.status_code == 401 and "Usuário ou senha inválidos." in response.text
    assert len(checks) == 5
    # now even the right password is refused, without being checked
    response = login(kit, client, "fiscal", kit.PASSWORD)
    assert refused_minutes(response) == 15
    assert "Tente novamente em 15 minutos." in response.text
    assert response.headers["retry-after"] == str(15 * 60)
    assert 'name="username"' in response.text  # the login form, with the message
    assert len(checks) == 5 and kit.web_sessions() == []
    # from another address too: the lock is the username's
    assert refused_minutes(login(kit, client_at("198.51.100.7"), "fiscal", kit.PASSWORD)) == 15
    # other usernames are not affected
    assert login(kit, client_at(), "gestor", kit.PASSWORD).status_code == 303
    # refused attempts do not extend the lockout
    kit.clock.advance(minutes=14, seconds=30)
    response = login(kit, client, "fiscal", kit.PASSWORD)
    assert refused_minutes(response) == 1 and "Tente novamente em 1 minuto." in response.text
    assert response.headers["retry-after"] == "30"
    kit.clock.advance(seconds=30)
    assert login(kit, client, "fiscal", kit.PASSWORD).status_code == 303
    assert len(checks) == 7  # gestor's login and this one


def test_failures_outside_the_window_do_not_count(kit, client_at):
    client = client_at()
    for _ in range(4):
        assert login(kit, client, "fiscal", WRONG).status_code == 401
    kit.clock.advance(minutes=15, seconds=1)
    for _ in range(4):
        assert login(kit, client, "fiscal", WRONG).status_code == 401
    assert login(kit, client, "fiscal", kit.PASSWORD).status_code == 303


def test_a_successful_login_clears_the_usernames_failures(kit, client_at):
    client = client_at()
    for _ in range(4):
        assert login(kit, client, "op-trd", WRONG).status_code == 401
    assert login(kit, client, "op-trd", kit.PASSWORD).status_code == 303
    for _ in range(4):
        assert login(kit, client, "op-trd", WRONG).status_code == 401
    assert login(kit, client, "op-trd", kit.PASSWORD).status_code == 303
    # and the fifth failure in a row locks it again
    for _ in range(5):
        assert login(kit, client, "op-trd", WRONG).status_code == 401
    assert refused_minutes(login(kit, client, "op-trd", kit.PASSWORD)) == 15


def test_the_client_address_limit_spans_usernames(kit, app, client_at, checks):
    sprayer = client_at("203.0.113.5")
    usernames = ["fiscal", "gestor", "op-vnv", "ninguem", "admin"]  # 4 guesses each: no username is locked
    for username in usernames:
        for _ in range(4):
            assert login(kit, sprayer, username, WRONG).status_code == 401
    assert len(checks) == 20
    # the 21st attempt from that address is refused, whatever the username or password
    for username in ("op-trd", "fiscal", "outro"):
        assert refused_minutes(login(kit, sprayer, username, kit.PASSWORD)) == 15
    assert len(checks) == 20
    # other clients log in, even as the usernames sprayed at
    elsewhere = client_at("198.51.100.7")
    assert login(kit, elsewhere, "fiscal", kit.PASSWORD).status_code == 303
    assert login(kit, client_at("198.51.100.8"), "op-trd", kit.PASSWORD).status_code == 303
    # a success elsewhere does not reset the sprayer's count
    assert refused_minutes(login(kit, sprayer, "op-trd", kit.PASSWORD)) == 15
    kit.clock.advance(minutes=15)
    assert login(kit, sprayer, "op-trd", kit.PASSWORD).status_code == 303


def test_a_login_success_does_not_reset_the_address_count(kit, client_at):
    client = client_at("203.0.113.9")
    for i in range(19):
        assert login(kit, client, f"ninguem-{i % 5}", WRONG).status_code == 401
    assert login(kit, client, "gestor", kit.PASSWORD).status_code == 303  # a valid account ...
    assert login(kit, client, "ninguem-9", WRONG).status_code == 401      # ... still the 20th failure
    assert refused_minutes(login(kit, client, "gestor", kit.PASSWORD)) == 15


def test_unknown_usernames_are_throttled_like_existing_ones(kit, client_at, checks):
    answers = {}
    for username in ("fiscal", "ninguem"):
        client = client_at()
        for _ in range(5):
            response = login(kit, client, username, WRONG)
            assert response.status_code == 401 and "Usuário ou senha inválidos." in response.text
        response = login(kit, client, username, kit.PASSWORD)
        assert refused_minutes(response) == 15
        # the same page: only the CSRF token and the username differ
        answers[username] = (response.status_code, response.headers["retry-after"],
                             kit.CSRF.sub("", response.text).replace(f'value="{username}"', ""))
    assert answers["fiscal"] == answers["ninguem"]
    assert checks == ["fiscal"] * 5 + ["ninguem"] * 5  # a locked username is never checked, known or not


def test_usernames_are_counted_regardless_of_case_and_width(kit, client_at):
    client = client_at()
    for username in ("fiscal", "Fiscal", "FISCAL", "\uff46\uff49\uff53\uff43\uff41\uff4c", " fiscal "):  # fullwidth
        assert login(kit, client, username, WRONG).status_code == 401
    assert refused_minutes(login(kit, client, "fiscal", kit.PASSWORD)) == 15


def test_the_thresholds_are_configurable(kit, make_app, client_at):
    app = make_app(login_max_failures=2, login_lockout_minutes=30, login_max_failures_per_ip=3)
    client = client_at(application=app)
    for _ in range(2):
        assert login(kit, client, "fiscal", WRONG).status_code == 401
    assert refused_minutes(login(kit, client, "fiscal", kit.PASSWORD)) == 30
    assert login(kit, client, "gestor", WRONG).status_code == 401  # the third failure of this address
    assert refused_minutes(login(kit, client, "gestor", kit.PASSWORD)) == 30


def test_the_apps_throttle_forgets_old_failures(kit, app, client_at):
    client = client_at()
    for username in ("ninguem-1", "ninguem-2", "fiscal"):
        assert login(kit, client, username, WRONG).status_code == 401
    throttle = app.state.web.throttle
    assert throttle.tracked() == (3, 1)
    assert login(kit, client, "fiscal", kit.PASSWORD).status_code == 303
    assert throttle.tracked() == (2, 1)  # the success forgot fiscal's failure
    kit.clock.advance(minutes=16)
    assert login(kit, client, "ninguem-3", WRONG).status_code == 401
    assert throttle.tracked() == (1, 1)  # only the new failure is left


# --- the LoginThrottle itself ------------------------------------------------------------------

def test_throttle_prunes_expired_entries():
    throttle = LoginThrottle()
    for i in range(1000):
        throttle.failed(f"user-{i}", f"10.0.{i // 100}.{i % 100}", T0 + dt.timedelta(seconds=i // 100))
    assert throttle.tracked() == (1000, 1000)
    throttle.prune(T0 + dt.timedelta(minutes=14))
    assert throttle.tracked() == (1000, 1000)
    throttle.prune(T0 + dt.timedelta(minutes=15, seconds=4))  # the failures of the first 5 seconds left
    assert throttle.tracked() == (500, 500)
    # any new failure prunes too
    throttle.failed("late", "10.9.9.9", T0 + dt.timedelta(minutes=30))
    assert throttle.tracked() == (1, 1)


def test_throttle_keeps_lockouts_longer_than_the_window():
    throttle = LoginThrottle(max_failures=2, window=dt.timedelta(minutes=15), lockout=dt.timedelta(hours=1))
    throttle.failed("fiscal", "10.0.0.1", T0)
    throttle.failed("fiscal", "10.0.0.2", T0)
    throttle.failed("other", "10.0.0.3", T0 + dt.timedelta(minutes=1))
    later = T0 + dt.timedelta(minutes=30)
    throttle.prune(later)
    assert throttle.tracked() == (1, 0)
    assert throttle.allowed("fiscal", "10.0.0.4", later) == 30 * 60
    assert throttle.allowed("other", "10.0.0.3", later) is None
    throttle.prune(T0 + dt.timedelta(hours=1))
    assert throttle.tracked() == (0, 0)
    assert throttle.allowed("fiscal", "10.0.0.4", T0 + dt.timedelta(hours=1)) is None


def test_throttle_memory_is_capped():
    throttle = LoginThrottle(max_entries=100)
    for i in range(1000):
        throttle.failed(f"user-{i}", f"10.0.{i // 250}.{i % 250}", T0)
    assert throttle.tracked() == (100, 100)
    # the most recent are kept
    for _ in range(4):
        throttle.failed("user-999", "10.1.0.1", T0)
    assert throttle.allowed("user-999", "10.1.0.2", T0) == 15 * 60


def test_throttle_locks_and_unlocks():
    throttle = LoginThrottle()
    for i in range(4):
        throttle.failed("fiscal", "10.0.0.1", T0 + dt.timedelta(minutes=i))
        assert throttle.allowed("fiscal", "10.0.0.1", T0 + dt.timedelta(minutes=i)) is None
    throttle.failed("fiscal", "10.0.0.1", T0 + dt.timedelta(minutes=4))
    assert throttle.allowed("fiscal", "10.0.0.2", T0 + dt.timedelta(minutes=4)) == 15 * 60
    assert throttle.allowed("gestor", "10.0.0.1", T0 + dt.timedelta(minutes=4)) is None
    assert throttle.allowed("fiscal", "10.0.0.2", T0 + dt.timedelta(minutes=18, seconds=59, microseconds=1)) == 1
    assert throttle.allowed("fiscal", "10.0.0.2", T0 + dt.timedelta(minutes=19)) is None
    throttle.succeeded("fiscal", "10.0.0.1", T0 + dt.timedelta(minutes=19))
    assert throttle.tracked()[0] == 0


def test_throttle_success_forgets_the_username_not_the_address():
    throttle = LoginThrottle()
    throttle.failed("gestor", "10.0.0.9", T0)
    throttle.failed("ninguem", "10.0.0.9", T0)
    throttle.succeeded("gestor", "10.0.0.9", T0)
    assert throttle.tracked() == (1, 1)


def test_throttle_counts_attempts_in_flight():
    throttle = LoginThrottle()
    for _ in range(5):  # a burst of simultaneous guesses, none answered yet
        assert throttle.begin("fiscal", "10.0.0.1", T0) is None
    assert throttle.begin("fiscal", "10.0.0.2", T0) == IN_FLIGHT_WAIT
    assert throttle.allowed("gestor", "10.0.0.1", T0) is None
    for _ in range(5):
        throttle.end("fiscal", "10.0.0.1")
        throttle.failed("fiscal", "10.0.0.1", T0)
    assert throttle.allowed("fiscal", "10.0.0.2", T0) == 15 * 60
    # an attempt that ended without an answer (an error) leaves nothing behind
    assert throttle.begin("gestor", "10.0.0.3", T0) is None
    throttle.end("gestor", "10.0.0.3")
    assert throttle.tracked() == (1, 1)


# --- forwarded headers (#32 item 8): a client names its own address only through the proxy ---

def _spray_with_forged_addresses(kit, client, attempts: int):
    """One failure per username, each request claiming another client address."""
    responses = []
    for i in range(attempts):
        client.cookies.clear()
        page = client.get("/entrar")
        token = kit.CSRF.search(page.text).group(1)
        responses.append(client.post("/entrar", headers={"X-Forwarded-For": f"198.51.100.{i + 1}"},
                                     data={"username": f"ninguem-{i}", "password": WRONG, "csrf_token": token}))
    return responses


def test_a_forwarded_address_is_not_believed_by_default_even_from_the_loopback(kit, make_app):
    # before (uvicorn's default trust of 127.0.0.1): 25 failures over 25 usernames with
    # rotating X-Forwarded-For drew no 429. Served by uvicorn as `serve` configures it.
    import socket
    import threading

    import httpx
    import uvicorn

    from web.server import uvicorn_config

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn_config(make_app(secure_cookies=False), "127.0.0.1", 0))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            thread.join(0.05)
        with httpx.Client(base_url=f"http://127.0.0.1:{listening.getsockname()[1]}") as client:
            responses = _spray_with_forged_addresses(kit, client, 25)
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()
    assert [r.status_code for r in responses] == [401] * 20 + [429] * 5


def test_a_forwarded_address_from_a_client_that_is_not_the_proxy_is_ignored(kit, make_app, client_at):
    app = make_app(trusted_proxies=("10.0.0.2",))
    responses = _spray_with_forged_addresses(kit, client_at("203.0.113.5", application=app), 21)
    assert responses[-1].status_code == 429


def test_the_configured_proxy_names_each_client_and_its_limit_stays_theirs(kit, make_app, client_at):
    app = make_app(trusted_proxies=("10.0.0.0/24",))
    proxy = client_at("10.0.0.2", application=app)
    responses = _spray_with_forged_addresses(kit, proxy, 25)  # 25 clients behind the proxy
    assert {r.status_code for r in responses} == {401}
    same_client = []
    for i in range(21):
        proxy.cookies.clear()
        token = kit.CSRF.search(proxy.get("/entrar").text).group(1)
        same_client.append(proxy.post("/entrar", headers={"X-Forwarded-For": "198.51.100.200"},
                                      data={"username": f"outro-{i}", "password": WRONG, "csrf_token": token}))
    assert [r.status_code for r in same_client] == [401] * 20 + [429]
