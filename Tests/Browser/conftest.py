"""Fixtures for the browser phone's test (docs/PHONE.md): a local coturn on
loopback, one `ringd --ephemeral` that mints TURN credentials for it, and
headless Chromium sessions (Selenium, Debian's chromium and chromedriver)
that open the page ringd serves.

Everything is on 127.0.0.1; Chromium is told to resolve no host name at
all, and its background services are off, so the test talks to nothing
else. RINGD names the binary (as for examples/python); BROWSER_TEST_OUT the
folder for screenshots (default .build/browser-test)."""

import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
AUTH_KEY = "ringd-dev-auth-key"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
TURNSERVER = os.environ.get("TURNSERVER", "/usr/bin/turnserver")
# coturn's relay ports: a range of its own, apart from CoturnCredentialTests' 50200-50299.
RELAY_PORTS = (50300, 50399)


def _terminated(signum, _frame):
    # `make browser-test` runs pytest under timeout(1), which sends SIGTERM:
    # as an interrupt, pytest still tears the fixtures down (chromium,
    # chromedriver, coturn, ringd) instead of dying with them running.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends it at once
    raise KeyboardInterrupt(f"signal {signum}")


signal.signal(signal.SIGTERM, _terminated)


def stop_process(process, seconds=5):
    """terminate, then kill if it has not gone after `seconds`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=seconds)


def kill_chromium(profile):
    """Kills what is left of the Chromium started with this (unique) profile."""
    needle = f"--user-data-dir={profile}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes().split(b"\0"):
                os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


def ringd_executable():
    given = os.environ.get("RINGD")
    if given:
        return given
    built = ROOT / ".build" / "debug" / "ringd"
    return str(built) if built.exists() else shutil.which("ringd")


def free_port():
    """A port free for both TCP and UDP on 127.0.0.1 (TURN listens on both)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind(("127.0.0.1", 0))
            port = tcp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    raise RuntimeError("no free port")


def wait_for_tcp(port, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)  # polling a port that is not open yet; not a synchronisation of the page
    raise RuntimeError(f"nothing listens on {port} after {seconds} s")


@pytest.fixture(scope="session")
def output_dir():
    path = Path(os.environ.get("BROWSER_TEST_OUT", ROOT / ".build" / "browser-test"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def coturn():
    """coturn with a shared secret (use-auth-secret), loopback peers allowed."""
    if not os.access(TURNSERVER, os.X_OK):
        pytest.fail(f"{TURNSERVER} is missing: make browser-test installs coturn")
    port, secret = free_port(), secrets.token_hex(24)
    process = subprocess.Popen(
        [TURNSERVER, "--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", f"--listening-port={port}",
         "--use-auth-secret", f"--static-auth-secret={secret}", "--realm=ringd.test",
         "--allow-loopback-peers", "--no-cli", "--no-tls", "--no-dtls", "--fingerprint",
         f"--min-port={RELAY_PORTS[0]}", f"--max-port={RELAY_PORTS[1]}",
         "--log-file=stdout", "--simple-log", "--pidfile=/dev/null"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_tcp(port)
        yield {"port": port, "secret": secret}
    finally:
        stop_process(process, seconds=2)


class Ringd:
    def __init__(self, coturn):
        self.test_key = "test-" + secrets.token_hex(16)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RINGD")}
        env.update(
            RINGD_TESTING_ENABLED="true", RINGD_TESTING_KEY=self.test_key,
            RINGD_WEBRTC_ICE_SERVERS=f'[{{"urls":["turn:127.0.0.1:{coturn["port"]}?transport=udp"]}}]',
            RINGD_WEBRTC_TURN_SECRET=coturn["secret"])
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([ringd_executable(), "--ephemeral"], env=env, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        ready, _, _ = select.select([self.process.stdout], [], [], 10)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("listening ws://"):
            self.process.kill()
            self.log.seek(0)
            raise RuntimeError(f"ringd did not start: {line!r} {self.log.read()[-2000:]!r}")
        self.address = line.split("ws://", 1)[1].strip()
        self.url = f"http://{self.address}"

    def api(self, path):
        """A POST to the test API (docs/TEST-API.md)."""
        request = urllib.request.Request(f"{self.url}{path}", data=b"{}", method="POST",
                                         headers={"X-Test-Key": self.test_key, "Content-Type": "application/json"})
        urllib.request.urlopen(request, timeout=30).read()

    def reset(self):
        self.api("/v1/test/reset")

    def stop(self):
        stop_process(self.process)


@pytest.fixture(scope="session")
def ringd(coturn):
    server = Ringd(coturn)
    yield server
    server.stop()


def chromium_options(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in [
        "--headless=new",
        "--no-sandbox",  # Chromium refuses to run as root with its sandbox (CI runs as root)
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=900,700",
        # A camera and microphone without a prompt: Chromium's fake devices
        # (a moving test pattern and a beep).
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        "--autoplay-policy=no-user-gesture-required",
        "--allow-loopback-in-peer-connection",
        # Nothing leaves the machine: no name resolves (the test uses
        # 127.0.0.1 literally), and the background services are off.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-features=MediaRouter,OptimizationHints,Translate,AutofillServerCommunication",
        "--no-default-browser-check",
        "--no-first-run",
        "--no-pings",
        "--password-store=basic",
        "--use-mock-keychain",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return options


class Page:
    """One user's phone page in its own Chromium session."""

    def __init__(self, driver, name):
        self.driver, self.name = driver, name

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, condition, seconds=10, message=""):
        return WebDriverWait(self.driver, seconds, poll_frequency=0.05).until(
            lambda _: condition(), message=f"{self.name}: {message}")

    def state(self):
        return self.js("return document.body.dataset.callState")

    def wait_state(self, state, seconds=10):
        self.wait(lambda: self.state() == state, seconds, f"call state {state!r}, is {self.state()!r}")

    def text(self, element_id):
        return self.js("return document.getElementById(arguments[0]).textContent", element_id)

    def click(self, element_id):
        self.wait(lambda: self.js("const b = document.getElementById(arguments[0]);"
                                  "return !!b && !b.hidden && !b.disabled", element_id),
                  message=f"#{element_id} to be clickable")
        self.driver.find_element("id", element_id).click()

    def type(self, element_id, text):
        field = self.driver.find_element("id", element_id)
        field.clear()
        field.send_keys(text)

    def console_errors(self):
        entries = self.driver.get_log("browser")
        if os.environ.get("BROWSER_TEST_CONSOLE"):
            for entry in entries:
                print(self.name, entry["level"], entry["message"])
        return [entry for entry in entries if entry["level"] == "SEVERE"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test, for the browser fixture to see a failure."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"report_{report.when}", report)


@pytest.fixture
def browser(ringd, output_dir, request):
    """browser(name, query="?relay=1") opens the page in a fresh Chromium profile; address= another page."""
    drivers, profiles = [], []

    def open_page(name, query="?relay=1", address=None):
        profile = tempfile.mkdtemp(prefix=f"ringd-browser-{name}-")
        profiles.append(profile)
        service = Service(executable_path=CHROMEDRIVER, log_output=str(output_dir / f"chromedriver-{name}.log"))
        driver = webdriver.Chrome(options=chromium_options(profile), service=service)
        drivers.append(driver)
        driver.set_script_timeout(10)
        driver.get(address or f"{ringd.url}/phone/{query}")
        return Page(driver, name)

    yield open_page
    for driver in drivers:
        try:
            driver.quit()
        except Exception:  # a session that already died: its processes and profile go anyway
            pass
        process = getattr(driver.service, "process", None)
        if process is not None:
            stop_process(process, seconds=2)
    for profile in profiles:
        kill_chromium(profile)
        shutil.rmtree(profile, ignore_errors=True)
    # A test that failed half-way may leave a call live (alice busy for the
    # next one): the server starts afresh. Passing tests end their calls.
    report = getattr(request.node, "report_call", None)
    if report is None or report.failed:
        ringd.reset()
