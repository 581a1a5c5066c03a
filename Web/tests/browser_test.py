#!/usr/bin/env python3
"""The web vault in a real browser: headless Chromium (Debian's chromium + chromium-driver) driven by Selenium against
a real coffer-server on loopback. The CLI registers an account and adds cards, tokens and keys; the browser logs in;
each card's full-screen barcode is screenshotted and decoded by zxing-cpp, codes are compared with oathtool, and a
wrong passphrase, a tampered box and a rolled-back state (served by a hostile proxy in front of the real server) each
show their error. Chromium's log must hold no Content-Security-Policy violation.

Usage: browser_test.py [--screenshots DIR] [--bench N]
  --screenshots DIR  also writes the main screens as PNG files into DIR (docs/web-vault in the repository)
  --bench N          afterwards, a vault of N cards: unlock-to-list time (PBKDF2 included), barcode time, app size
Needs COFFER_BIN / COFFER_SERVER_BIN or .build/debug/{coffer,coffer-server}, and Web/app/coffer-barcode.wasm.
"""
import argparse
import base64
import gzip
import hmac
import http.client
import http.server
import io
import shutil
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import zxingcpp
from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
COFFER = os.environ.get("COFFER_BIN", str(ROOT / ".build/debug/coffer"))
SERVER = os.environ.get("COFFER_SERVER_BIN", str(ROOT / ".build/debug/coffer-server"))
APP = ROOT / "Web/app"
PASSPHRASE = "web vault passphrase 42"
TOTP_SECRET = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"  # "12345678901234567890"

failures = []


def check(condition, what):
    print(("ok     " if condition else "FAILED ") + what, flush=True)
    if not condition:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CLI:
    """One `coffer` home (a device)."""

    def __init__(self, home):
        self.env = {"HOME": home, "XDG_DATA_HOME": home + "/data", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                    "NO_COLOR": "1", "SWIFT_BACKTRACE": "enable=no"}

    def __call__(self, *args, input_text=""):
        result = subprocess.run([COFFER, *args], input=input_text.encode(), env=self.env, capture_output=True)
        if result.returncode != 0:
            raise RuntimeError(f"coffer {args[0]} failed: {result.stderr.decode()}")
        return result.stdout.decode()


class Server:
    def __init__(self, data, host="127.0.0.1", app=APP):
        self.data = data
        self.app = app
        self.port = free_port()
        self.url = f"http://{host}:{self.port}"
        self.start()

    def start(self):
        self.process = subprocess.Popen(
            [SERVER, "--data", self.data, "--port", str(self.port), "--web-vault", "--web-vault-dir", str(self.app)],
            env={"PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no", "COFFER_LOG": "error"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if urllib.request.urlopen(self.url + "/health", timeout=1).status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("coffer-server did not start")

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def places(data):
    """Two Costco stores in San Francisco, imported into the server's public places."""
    networks = Path(data, "networks.csv")
    networks.write_text("id,name,canonical_names,category,is_large_area,default_radius_meters,tags\n"
                        "costco,Costco,Costco|Costco Wholesale,grocery,false,150,membership\n")
    stores = Path(data, "costco.csv")
    stores.write_text("name,address,lat,lon,radius,phone\n"
                      "Costco SF,1450 Harrison St,37.7700,-122.4130,,\n"
                      "Costco South SF,451 S Airport Blvd,37.6526,-122.4079,,\n")
    for arguments in ([str(networks)], ["--network", "costco", str(stores)]):
        subprocess.run([SERVER, "places", "import", "--data", data, *arguments], check=True, capture_output=True,
                       env={"PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no"})


class HostileProxy:
    """A server that lies: it forwards to the real one, but can flip a bit of a box in the change feed, or answer the
    feed with one it recorded earlier (a rollback)."""

    def __init__(self, upstream_port):
        self.mode = "honest"
        self.recorded = None
        self.paths = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self):
                proxy.paths.append(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                connection = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
                connection.request(self.command, self.path, body=body, headers=headers)
                answer = connection.getresponse()
                data = answer.read()
                if self.path.startswith("/v1/sync/changes") and answer.status == 200:
                    data = proxy.rewrite(data)
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def rewrite(self, data):
        if self.mode == "record":
            self.recorded = data
        if self.mode == "rollback" and self.recorded is not None:
            return self.recorded
        if self.mode == "tamper":
            page = json.loads(data)
            for item in page["items"]:
                if item.get("box"):
                    box = bytearray(base64.b64decode(item["box"]))
                    box[20] ^= 0x01
                    item["box"] = base64.b64encode(bytes(box)).decode()
                    break
            return json.dumps(page).encode()
        return data

    def stop(self):
        self.server.shutdown()


def browser(camera=None):
    """Headless Chromium; with `camera` (a .y4m file), its fake camera plays that video and the page may use it."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=430,932",
                 "--force-device-scale-factor=1", "--hide-scrollbars"):
        options.add_argument(flag)
    if camera:
        for flag in ("--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                     f"--use-file-for-fake-video-capture={camera}"):
            options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # Every CSP violation of a page is an event; the test's own probe (run by DevTools, outside the page's CSP) keeps
    # them in the tab's sessionStorage across the origin's page loads.
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": CSP_PROBE})
    return driver


CSP_PROBE = """document.addEventListener('securitypolicyviolation', (event) => {
  sessionStorage.setItem('test.csp', (sessionStorage.getItem('test.csp') || '') + event.violatedDirective + ' '
    + event.blockedURI + '\\n');
});"""


def wait_screen(driver, screen, timeout=60):
    WebDriverWait(driver, timeout).until(
        lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == screen
        or d.find_element(By.ID, "error").is_displayed())


def error_text(driver):
    element = driver.find_element(By.ID, "error")
    return element.text if element.is_displayed() else ""


def log_in(driver, url, email, passphrase):
    driver.get(url + "/app/")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "email").is_displayed())
    driver.find_element(By.ID, "email").clear()
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "passphrase").send_keys(passphrase)
    driver.find_element(By.ID, "unlock").click()
    wait_screen(driver, "vault")
    wait_synced(driver)


def reopen(driver, url):
    """Opens the app again (the email is remembered) and unlocks it with the passphrase."""
    driver.get(url + "/app/")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "passphrase").is_displayed())
    driver.find_element(By.ID, "passphrase").send_keys(PASSPHRASE)
    driver.find_element(By.ID, "unlock").click()
    wait_screen(driver, "vault")
    wait_synced(driver)


def wait_synced(driver, timeout=60):
    """Until the sync after an unlock from this browser's copy has ended (or an error shows)."""
    WebDriverWait(driver, timeout).until(
        lambda d: d.find_element(By.ID, "error").is_displayed()
        or d.find_element(By.TAG_NAME, "body").get_attribute("data-screen") != "vault"
        or d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") in ("done", "offline", "failed"))


def lock(driver):
    if driver.find_element(By.ID, "lock").is_displayed():
        driver.find_element(By.ID, "lock").click()


STORED_COPY = """const done = arguments[arguments.length - 1];
const opening = indexedDB.open('coffer');
opening.onsuccess = () => {
  const transaction = opening.result.transaction(['vaults', 'rows']);
  const out = {};
  for (const name of ['vaults', 'rows']) {
    const request = transaction.objectStore(name).getAll();
    request.onsuccess = () => {
      out[name] = request.result;
      if (Object.keys(out).length === 2) {
        opening.result.close();
        done(JSON.stringify(out, (key, value) => (value instanceof Uint8Array ? Array.from(value, (b) => String.fromCharCode(b)).join('') : value)));
      }
    };
  }
};
opening.onerror = () => done('{"vaults": [], "rows": []}');"""


def stored_copy(driver):
    """This origin's IndexedDB, bytes as Latin-1 text, so that any plaintext stored would show."""
    return json.loads(driver.execute_async_script(STORED_COPY))


def screenshot(driver, directory, name):
    png = driver.get_screenshot_as_png()
    if directory:
        Path(directory, name).write_bytes(png)
    return png


def decode(png):
    results = zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))
    return [result.bytes for result in results]


def csp_violations(driver):
    """The violations the probe saw on this origin, and those Chromium logged to the console."""
    seen = driver.execute_script("return sessionStorage.getItem('test.csp') || ''").split("\n")
    logged = [entry["message"] for entry in driver.get_log("browser")
              if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]
    return [line for line in seen if line] + logged


def oathtool_codes(secret_hex, now):
    """The TOTP codes of the 30-second steps around `now` (the page may have drawn the one before)."""
    return {subprocess.run(["oathtool", "--totp", "-N", f"@{t}", secret_hex], capture_output=True, text=True).stdout.strip()
            for t in (now - 30, now, now + 30)}


def steam_codes(secret, now):
    """Steam Guard codes of the 30-second steps around `now`, from Python's hmac."""
    codes = set()
    for t in (now - 30, now, now + 30):
        mac = hmac.digest(secret, struct.pack(">Q", t // 30), "sha1")
        offset = mac[-1] & 15
        value = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
        code = ""
        for _ in range(5):
            code += "23456789BCDFGHJKMNPQRTVWXY"[value % 26]
            value //= 26
        codes.add(code)
    return codes


CARDS = [
    # name, symbology, payload, extra flags
    ("Costco", "code128", "111222333444", ["--tag", "grocery", "--network", "costco", "--valid-to", "2099-01-31"]),
    ("Boarding pass", "aztec", "M1DOE/JANE EABC123 SFOLAXUA 0123 123Y001A0001 100", ["--tag", "travel"]),
    ("Amazon return", "qr", "https://example.com/r/1?é", ["--one-time"]),
    ("Library", "pdf417", "LIB-0042-7788", ["--tag", "books"]),
    ("Gym", "ean13", "4006381333931", []),
    ("Pharmacy", "datamatrix", "RX-55-1234", []),
    ("Old coupon", "code39", "COUPON-7", ["--valid-to", "2020-01-31"]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--screenshots")
    parser.add_argument("--bench", type=int, default=0)
    arguments = parser.parse_args()
    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="coffer-web-")
    server = Server(work + "/server")
    places(work + "/server")
    proxy = HostileProxy(server.port)
    driver = browser()
    try:
        cli = CLI(work + "/a")
        cli("init")
        for name, symbology, payload, flags in CARDS:
            cli("add", "card", name, "--symbology", symbology, *flags, input_text=payload + "\n")
        cli("add", "otp", input_text=f"otpauth://totp/GitHub:alice@example.com?secret={TOTP_SECRET}&issuer=GitHub\n")
        cli("add", "otp", input_text=f"otpauth://totp/Steam:gabe?secret={TOTP_SECRET}&issuer=Steam&encoder=steam\n")
        cli("add", "otp", input_text=f"otpauth://hotp/Duo:alice?secret={TOTP_SECRET}&issuer=Duo&counter=5\n")
        cli("add", "credential", "OpenAI", "--provider", "openai", input_text="sk-proj-browser-test-0123456789\n")
        cli("add", "note", "Bob", input_text="Met at the café\n")
        cli("add", "key", "Signing key",
            input_text="9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60\n424242\n424242\n")
        email = f"web-{uuid.uuid4().hex[:8]}@example.org"
        cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")

        # The app says what a web vault cannot promise.
        driver.get(server.url + "/app/")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "about-link").is_displayed())
        driver.find_element(By.ID, "about-link").click()
        about = driver.find_element(By.ID, "about").text
        check("server you run or trust" in about and "full guarantee" in about, "the About page states the limit")
        screenshot(driver, arguments.screenshots, "web-vault-about.png")

        # A wrong passphrase: refused by the server, said plainly, nothing shown.
        log_in(driver, server.url, email, "not the passphrase")
        check("wrong email or passphrase" in error_text(driver), "a wrong passphrase shows its error")
        screenshot(driver, arguments.screenshots, "web-vault-wrong-passphrase.png")

        log_in(driver, server.url, email, PASSPHRASE)
        check(error_text(driver) == "", f"logs in ({error_text(driver) or 'no error'})")
        names = [e.text.split("\n")[0] for e in driver.find_elements(By.CSS_SELECTOR, "#cards li.open")]
        check(sorted(names) == sorted(c[0] for c in CARDS), f"every card is listed: {names}")
        check(names[-1] == "Old coupon" and "expired" in driver.find_elements(By.CSS_SELECTOR, "#cards li.open")[-1].text,
              "the expired card is labelled and listed last")
        screenshot(driver, arguments.screenshots, "web-vault-cards.png")

        # Search and tags narrow the list.
        driver.find_element(By.ID, "search").send_keys("lib")
        shown = [e.text.split("\n")[0] for e in driver.find_elements(By.CSS_SELECTOR, "#cards li.open")]
        check(shown == ["Library"], f"search finds by name: {shown}")
        driver.find_element(By.ID, "search").clear()
        driver.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")

        # Every card's barcode, from a screenshot, decoded by zxing-cpp: the exact payload bytes.
        barcode_ms = []
        for name, symbology, payload, _ in CARDS:
            row = next(e for e in driver.find_elements(By.CSS_SELECTOR, "#cards li.open") if e.text.split("\n")[0] == name)
            row.click()
            wait_screen(driver, "barcode")
            if driver.find_element(By.TAG_NAME, "body").get_attribute("data-screen") != "barcode":
                check(False, f"{name} ({symbology}): no barcode drawn: {error_text(driver)!r}")
                continue
            png = screenshot(driver, arguments.screenshots if name in ("Costco", "Boarding pass") else None,
                             f"web-vault-barcode-{symbology}.png")
            decoded = decode(png)
            expected = payload.encode()
            if symbology == "ean13":
                expected = payload.encode()
            check(expected in decoded, f"{name} ({symbology}): zxing-cpp reads {decoded!r} from the screenshot")
            barcode_ms.append(float(driver.find_element(By.TAG_NAME, "body").get_attribute("data-barcode-ms") or "nan"))
            driver.find_element(By.ID, "barcode-close").click()
            wait_screen(driver, "vault")

        # Codes: TOTP as oathtool computes it, Steam in its alphabet, HOTP left to the CLI.
        driver.find_element(By.CSS_SELECTOR, "[data-tab=codes]").click()
        time.sleep(1.2)
        rows = {e.text.split("\n")[0]: e.text.split("\n") for e in driver.find_elements(By.CSS_SELECTOR, "#codes li")}
        now = int(time.time())
        github = rows.get("GitHub", [])
        check(len(github) >= 3 and github[2] in oathtool_codes(TOTP_SECRET_HEX, now), f"the TOTP code is oathtool's: {github}")
        steam = rows.get("Steam", [])
        check(len(steam) >= 3 and steam[2] in steam_codes(b"12345678901234567890", now),
              f"the Steam code is the Steam alphabet over RFC 4226's value: {steam}")
        check(rows.get("Duo", [])[2:3] == ["······"], f"the HOTP token shows its code only when asked: {rows.get('Duo')}")
        screenshot(driver, arguments.screenshots, "web-vault-codes.png")
        driver.find_element(By.CSS_SELECTOR, "[data-tab=cli]").click()
        cli_text = driver.find_element(By.ID, "cli").text
        check("Duo" not in cli_text and "Signing key" in cli_text and "coffer sign" in cli_text,
              f"the PIN-held key is listed as CLI-only: {cli_text!r}")
        driver.find_element(By.CSS_SELECTOR, "[data-tab=secrets]").click()
        secrets = driver.find_element(By.ID, "secrets").text
        check("sk-proj-…" in secrets and "browser-test" not in secrets, f"the credential is masked: {secrets!r}")
        driver.find_element(By.CSS_SELECTOR, "#secrets li").click()
        check("sk-proj-browser-test-0123456789" in driver.find_element(By.ID, "secrets").text, "tapping shows the credential")

        # Nothing decrypted in browser storage: only the verified manifest.
        storage = driver.execute_script("return JSON.stringify(Object.assign({}, localStorage))")
        check(set(json.loads(storage)) == {"coffer.email"} and email in storage,
              f"localStorage holds only the remembered email: {sorted(json.loads(storage))}")
        copy = stored_copy(driver)
        check(len(copy["vaults"]) == 1 and len(copy["rows"]) >= 12
              and all(secret not in json.dumps(copy) for secret in ("Costco", "111222333444", "sk-proj", "GitHub", "café", PASSPHRASE)),
              f"IndexedDB holds the vault's rows as ciphertext only ({len(copy['rows'])} rows)")
        lock(driver)
        check(driver.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "login"
              and "Costco" not in driver.page_source, "locking forgets every item")
        screenshot(driver, arguments.screenshots, "web-vault-login.png")

        violations = csp_violations(driver)
        check(not violations, f"no Content-Security-Policy violation on the server's origin: {violations}")

        # A tampered box, served by a hostile server: refused before anything is shown.
        proxy.mode = "tamper"
        log_in(driver, proxy.url, email, PASSPHRASE)
        check("altered or swapped" in error_text(driver) and driver.find_element(By.ID, "vault").is_displayed() is False,
              f"a tampered box is refused: {error_text(driver)!r}")
        screenshot(driver, arguments.screenshots, "web-vault-tampered.png")

        # A rollback: the proxy records the feed at epoch N; the vault moves on; the browser verifies N + 1; the
        # proxy then serves the recorded epoch-N feed, and the browser says so.
        proxy.mode = "record"
        log_in(driver, proxy.url, email, PASSPHRASE)
        lock(driver)
        cli("add", "card", "Newer card", "--symbology", "qr", input_text="newer\n")
        cli("sync")
        proxy.mode = "honest"
        log_in(driver, proxy.url, email, PASSPHRASE)
        check(error_text(driver) == "" and "Newer card" in driver.find_element(By.ID, "cards").text, "the newer state verifies")

        # Near me: the browser's position (emulated: San Francisco) sorts Costco first, by its nearest store; the
        # server is asked for the tile of the position's geohash-4 cell and nothing else.
        origin = proxy.url
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["geolocation"]})
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": 37.7700, "longitude": -122.4150, "accuracy": 20})
        proxy.paths.clear()
        driver.find_element(By.ID, "near").click()
        WebDriverWait(driver, 30).until(lambda d: "Sorted by" in d.find_element(By.ID, "near-status").text
                                        or d.find_element(By.ID, "error").is_displayed())
        first = driver.find_elements(By.CSS_SELECTOR, "#cards li.open")[0].text
        check(first.startswith("Costco\n") and " m · " in first, f"near me puts Costco first with its distance: {first!r}")
        # (The browser may also check the app's service worker for a new version: that is the app, not a question.)
        asked = [path for path in proxy.paths if not path.startswith("/app/")]
        check(asked == ["/v1/places/tiles/9q8y"], f"near me asks only for the cell's tile: {proxy.paths}")
        screenshot(driver, arguments.screenshots, "web-vault-near-me.png")
        # Watched while the page is open: moving to the other store re-sorts, with its distance.
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": 37.6530, "longitude": -122.4080, "accuracy": 20})
        try:
            WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,)).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, "#cards li.open")[0].text.startswith("Costco\n45 m · "))
            moved = True
        except TimeoutException:
            moved = False
        check(moved, f"moving re-sorts by the new nearest store: {driver.find_elements(By.CSS_SELECTOR, '#cards li.open')[0].text!r}")
        lock(driver)
        proxy.mode = "rollback"
        log_in(driver, proxy.url, email, PASSPHRASE)
        check("older state of the vault" in error_text(driver), f"a rolled-back state is refused: {error_text(driver)!r}")
        lock(driver)

        # After the browser has written: a tampered change and a rollback are still refused, and nothing is applied.
        proxy.mode = "honest"
        log_in(driver, proxy.url, email, PASSPHRASE)
        driver.find_element(By.ID, "add-card").click()
        fill(driver, "name", "Written via proxy")
        fill(driver, "payload", "PROXY-1")
        save(driver)
        synced(driver)
        check(driver.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "done", "the browser's write is pushed")
        fingerprint_before = driver.find_element(By.ID, "fingerprint").text
        cli("sync")
        cli("add", "card", "Written in the CLI", "--symbology", "qr", input_text="cli-2\n")
        cli("sync")
        for mode, expected in (("tamper", "altered or swapped"), ("rollback", "older state of the vault")):
            proxy.mode = mode
            click(driver, "#sync-now")
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "failed")
            check(expected in error_text(driver) and "Written in the CLI" not in driver.find_element(By.ID, "cards").text
                  and "Written via proxy" in driver.find_element(By.ID, "cards").text
                  and driver.find_element(By.ID, "fingerprint").text == fingerprint_before,
                  f"after the browser wrote, a {mode} is refused and nothing applied: {error_text(driver)!r}")
        proxy.mode = "honest"
        click(driver, "#sync-now")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "done")
        check("Written in the CLI" in driver.find_element(By.ID, "cards").text, "the honest server's state is then taken")
        lock(driver)

        # An account stretched with scrypt (N = 2^15, r = 8): the page runs ROMix itself over WebCrypto's PBKDF2.
        scrypt_cli = CLI(work + "/scrypt")
        scrypt_cli("init")
        scrypt_cli("add", "card", "Scrypt card", "--symbology", "qr", input_text="scrypt-42\n")
        scrypt_email = f"scrypt-{uuid.uuid4().hex[:8]}@example.org"
        scrypt_cli("sync", "register", "--scrypt", "--server", server.url, "--email", scrypt_email, input_text=PASSPHRASE + "\n")
        log_in(driver, server.url, scrypt_email, PASSPHRASE)
        unlock_ms = driver.find_element(By.TAG_NAME, "body").get_attribute("data-unlock-ms")
        check(error_text(driver) == "" and "Scrypt card" in driver.find_element(By.ID, "cards").text,
              f"an scrypt account opens ({float(unlock_ms or 'nan'):.0f} ms to the list)")
        lock(driver)

        violations = csp_violations(driver)
        check(not violations, f"no Content-Security-Policy violation on the proxy's origin: {violations}")

        new_version(driver, work, arguments.screenshots)
        many_codes(driver, work, arguments.screenshots)
        offline_device(driver, work, arguments.screenshots)
        passkeys(driver, work, arguments.screenshots)
        scanning(work, arguments.screenshots)
        print(f"browser test: {time.monotonic() - started:.1f} s; barcodes drawn in {max(barcode_ms, default=float('nan')):.1f} ms at most")

        if arguments.bench:
            bench(driver, arguments.bench, work, server)
    finally:
        driver.quit()
        proxy.stop()
        server.stop()
    if failures:
        print(f"{len(failures)} failed", file=sys.stderr)
        sys.exit(1)


TOTP_SECRET_HEX = b"12345678901234567890".hex()


class DevTools:
    """The browser's own DevTools socket (Selenium's CDP calls get no events): heap snapshots, other targets."""

    def __init__(self, driver):
        import websocket
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        endpoint = json.load(urllib.request.urlopen(f"http://{address}/json/version"))["webSocketDebuggerUrl"]
        self.socket = websocket.create_connection(endpoint, suppress_origin=True, timeout=120)
        self.next = 0

    def send(self, method, params=None, session=None, on_event=None):
        self.next += 1
        message = {"id": self.next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            answer = json.loads(self.socket.recv())
            if answer.get("id") == self.next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if on_event:
                on_event(answer)

    def page(self, url):
        """A session attached to the page showing `url`."""
        targets = self.send("Target.getTargets")["targetInfos"]
        target = next(t for t in targets if t["type"] == "page" and t["url"].startswith(url))
        return self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]

    def heap_snapshot(self, session):
        """The page's JavaScript heap after a garbage collection, as the snapshot's JSON text."""
        chunks = []
        self.send("HeapProfiler.enable", session=session)
        self.send("HeapProfiler.collectGarbage", session=session)
        self.send("HeapProfiler.takeHeapSnapshot", {"reportProgress": False}, session=session,
                  on_event=lambda event: chunks.append(event["params"]["chunk"])
                  if event.get("method") == "HeapProfiler.addHeapSnapshotChunk" else None)
        return "".join(chunks)

    def close(self):
        self.socket.close()


def click(driver, selector, index=0):
    """Clicks the index-th match without handing the element to Selenium (whose cache would keep it alive)."""
    driver.execute_script("document.querySelectorAll(arguments[0])[arguments[1]].click()", selector, index)


def offline_device(driver, work, directory):
    """The browser as a device: it keeps an encrypted copy, opens and unlocks with the server gone, shows every card
    and code, draws barcodes, says it is offline, and catches up when the server is back; Lock leaves nothing."""
    server = Server(work + "/offline-server")
    cli = CLI(work + "/offline")
    cli("init")
    cli("add", "card", "Basement Market", "--symbology", "code128", "--tag", "grocery", input_text="987650001234\n")
    cli("add", "card", "Grocer", "--symbology", "ean13", input_text="400638133393\n")
    cli("add", "card", "Long loyalty", "--symbology", "code128", input_text="COFFER-LOYALTY-MEMBER-ab-0042x\n")
    cli("add", "otp", input_text=f"otpauth://totp/Bank:ada@example.org?secret={TOTP_SECRET}&issuer=Bank\n")
    cli("add", "credential", "Vendor API", "--provider", "vendor", input_text="sk-live-offline-canary-77\n")
    email = f"offline-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        check(error_text(driver) == "", f"the first unlock copies the vault ({error_text(driver) or 'no error'})")
        # The service worker: installed, then in control of the page after a reload; the app is installable.
        driver.execute_async_script("navigator.serviceWorker.ready.then(() => arguments[0](true))")
        driver.get(server.url + "/app/")
        controlled = driver.execute_script("return Boolean(navigator.serviceWorker.controller)")
        errors = driver.execute_cdp_cmd("Page.getInstallabilityErrors", {})
        manifest = driver.execute_cdp_cmd("Page.getAppManifest", {})
        check(controlled and errors.get("installabilityErrors") == [] and not manifest.get("errors"),
              f"the service worker controls the app and it is installable: {errors} {manifest.get('errors')}")
        check(driver.find_element(By.ID, "email").get_attribute("value") == email, "the email is remembered")

        # No network (DevTools' offline emulation, on the page and on the service worker, whose own fetches the page's
        # emulation does not cover): the app opens from its shell and unlocks from its copy.
        tools = DevTools(driver)
        try:
            page = tools.page(server.url)
            worker = next(t for t in tools.send("Target.getTargets")["targetInfos"] if t["type"] == "service_worker")
            worker = tools.send("Target.attachToTarget", {"targetId": worker["targetId"], "flatten": True})["sessionId"]
            offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
            for session in (page, worker):
                tools.send("Network.enable", session=session)
                tools.send("Network.emulateNetworkConditions", offline, session=session)
            reopen(driver, server.url)
            check(driver.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "offline"
                  and "Basement Market" in driver.find_element(By.ID, "cards").text,
                  "with the network off, the app opens from its shell and unlocks from its copy")
            lock(driver)
            for session in (page, worker):
                tools.send("Network.emulateNetworkConditions", {**offline, "offline": False}, session=session)
        finally:
            tools.close()

        # In the background with "lock at once" set: locked when the page is hidden (another tab in front).
        driver.get(server.url + "/app/")
        log_in(driver, server.url, email, PASSPHRASE)
        driver.find_element(By.CSS_SELECTOR, "[data-tab=settings]").click()
        Select(driver.find_element(By.ID, "hidden-minutes")).select_by_value("0")
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        time.sleep(1.0)
        driver.close()
        driver.switch_to.window(first)
        WebDriverWait(driver, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "login")
        check(driver.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "login"
              and "Basement Market" not in driver.page_source, "hidden with 'lock at once' set, the app locks")
        driver.execute_script("localStorage.removeItem('coffer.settings')")

        # The server is gone: the app still opens, unlocks from its copy, and says it is offline.
        server.stop()
        started = time.monotonic()
        reopen(driver, server.url)
        cold = (time.monotonic() - started) * 1000
        names = [e.text.split("\n")[0] for e in driver.find_elements(By.CSS_SELECTOR, "#cards li.open")]
        status = driver.find_element(By.ID, "sync-status").text
        check(sorted(names) == ["Basement Market", "Grocer", "Long loyalty"] and "Offline" in status,
              f"offline, the copy opens in {cold:.0f} ms: {names}, {status!r}")
        screenshot(driver, directory, "web-vault-offline.png")
        driver.find_elements(By.CSS_SELECTOR, "#cards li.open")[names.index("Basement Market")].click()
        wait_screen(driver, "barcode")
        check(b"987650001234" in decode(screenshot(driver, None, "")), "offline, the barcode is drawn and reads back")
        driver.find_element(By.ID, "barcode-close").click()
        driver.find_element(By.CSS_SELECTOR, "[data-tab=codes]").click()
        time.sleep(1.2)
        bank = driver.find_element(By.CSS_SELECTOR, "#codes li").text.split("\n")
        check(len(bank) >= 3 and bank[2] in oathtool_codes(TOTP_SECRET_HEX, int(time.time())), f"offline, the TOTP code is oathtool's: {bank}")
        lock(driver)
        driver.find_element(By.ID, "passphrase").send_keys("not the passphrase")
        driver.find_element(By.ID, "unlock").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        check("wrong passphrase" in error_text(driver), f"offline, a wrong passphrase is refused: {error_text(driver)!r}")

        # The server is back with a newer state: Sync now brings it in, and the status says so.
        server.start()
        cli("add", "card", "Pushed later", "--symbology", "qr", input_text="later\n")
        cli("sync")
        driver.find_element(By.ID, "passphrase").send_keys(PASSPHRASE)
        driver.find_element(By.ID, "unlock").click()
        wait_screen(driver, "vault")
        wait_synced(driver)
        if driver.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "offline":
            click(driver, "#sync-now")
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "done")
        status = driver.find_element(By.ID, "sync-status").text
        check("Pushed later" in driver.find_element(By.ID, "cards").text and "last synced just now" in status,
              f"back online, the newer state is pulled and verified: {status!r}")
        till(driver, directory)
        writes(driver, server, cli, directory)
        lock_leaves_nothing(driver, server.url,
                            ["Basement Market", "987650001234", "sk-live-offline-canary-77", "Vendor API", "Pushed later", PASSPHRASE])
    finally:
        server.stop()


def new_version(driver, work, directory):
    """A new version of the app (any changed file) installs beside the one in use and waits: the page keeps running
    the old shell until the user taps Reload, then runs the new one, and the old shell's cache is gone."""
    app = Path(work, "app-copy")
    shutil.copytree(APP, app)
    server = Server(work + "/version-server", app=app)
    cli = CLI(work + "/version")
    cli("init")
    cli("add", "card", "Version card", "--symbology", "qr", input_text="v-1\n")
    email = f"version-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")
    shells = "return caches.keys().then((names) => names.filter((name) => name.startsWith('coffer-shell-')))"
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        driver.execute_async_script("navigator.serviceWorker.ready.then(() => arguments[0](true))")
        driver.get(server.url + "/app/")
        before = driver.execute_script(shells)
        # The app changes on the server (as an upgrade would change it), which restarts with it.
        server.stop()
        css = Path(app, "app.css")
        css.write_text(css.read_text() + "\n#update { outline: 1px solid transparent; }\n")
        server.start()
        reopen(driver, server.url)
        driver.execute_script("navigator.serviceWorker.getRegistration().then((r) => r && r.update())")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "update").is_displayed())
        waiting = driver.execute_script(shells)
        served = driver.execute_script("return getComputedStyle(document.getElementById('update')).outlineStyle")
        check(len(before) == 1 and len(waiting) == 2 and served == "none" and "Version card" in driver.find_element(By.ID, "cards").text,
              f"a new version installs beside the one in use and waits; the page still runs the old one ({before} → {waiting})")
        screenshot(driver, directory, "web-vault-update.png")
        driver.find_element(By.ID, "update-reload").click()
        WebDriverWait(driver, 30).until(lambda d: d.execute_script(
            "return getComputedStyle(document.getElementById('update')).outlineStyle") == "solid")
        after = driver.execute_script(shells)
        check(after == [name for name in waiting if name not in before] and driver.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "login",
              f"after Reload the new version runs, locked, and the old shell is gone: {after}")
    finally:
        server.stop()


def many_codes(driver, work, _):
    """800 tokens: sorted, searchable, and only the rows on screen are computed and redrawn each second (none while
    another tab is shown)."""
    server = Server(work + "/codes-server")
    cli = CLI(work + "/codes")
    cli("init")
    uris = Path(work, "tokens.txt")
    uris.write_text("".join(f"otpauth://totp/Service%20{i:03d}:user{i}?secret={TOTP_SECRET}&issuer=Service%20{i:03d}\n"
                            for i in reversed(range(800))))
    cli("import", "--from", "otpauth", str(uris))
    email = f"codes-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")
    count = "return [...document.querySelectorAll('#codes .code')].filter((code) => code.textContent).length"
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        driver.find_element(By.CSS_SELECTOR, "[data-tab=codes]").click()
        time.sleep(1.5)
        titles = driver.execute_script("return [...document.querySelectorAll('#codes .title')].slice(0, 3).map((t) => t.textContent)")
        computed = driver.execute_script(count)
        rows = driver.execute_script("return document.querySelectorAll('#codes li').length")
        check(rows == 800 and titles == ["Service 000", "Service 001", "Service 002"] and 0 < computed <= 40,
              f"800 tokens sorted; {computed} codes computed, those on screen")
        # Redraws touch only those rows: count the code nodes changed over three seconds.
        changed = driver.execute_async_script("""const done = arguments[arguments.length - 1];
            let changes = 0;
            const observer = new MutationObserver((records) => { changes += records.length; });
            observer.observe(document.getElementById('codes'), { subtree: true, childList: true, characterData: true });
            setTimeout(() => { observer.disconnect(); done(changes); }, 3000);""")
        check(changed <= 6 * computed, f"in 3 s, {changed} changes to the list (at most two a second per row on screen)")
        driver.find_element(By.ID, "code-search").send_keys("Service 7")
        time.sleep(1.2)
        shown = driver.execute_script("return document.querySelectorAll('#codes li').length")
        check(shown == 100, f"searching narrows the list: {shown}")
        driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
        idle = driver.execute_async_script("""const done = arguments[arguments.length - 1];
            let changes = 0;
            const observer = new MutationObserver((records) => { changes += records.length; });
            observer.observe(document.getElementById('codes'), { subtree: true, childList: true, characterData: true });
            setTimeout(() => { observer.disconnect(); done(changes); }, 2500);""")
        check(idle == 0, f"on the Cards tab no code is redrawn: {idle} changes")
        lock(driver)
    finally:
        server.stop()


# Every MediaStream the page opens, kept by the test (outside the page's CSP, through DevTools) so that it can see
# whether each camera track was stopped.
STREAM_PROBE = """(() => {
  const open = navigator.mediaDevices && navigator.mediaDevices.getUserMedia.bind(navigator.mediaDevices);
  if (!open) return;
  window.__testStreams = [];
  window.__testOpen = open;
  navigator.mediaDevices.getUserMedia = async (constraints) => {
    const stream = await open(constraints);
    window.__testStreams.push(stream);
    return stream;
  };
})();"""

LIVE_TRACKS = "return (window.__testStreams || []).flatMap((s) => s.getTracks()).filter((t) => t.readyState === 'live').length"


def scanning(work, directory):
    """Cards and tokens scanned in: Chromium's fake camera plays a video of camera-like photos (Tests/oracles/
    scan_photos.py), one symbology after another; Scan on the card form fills the symbology and the exact payload for
    every symbology; the reader's time per 1280x720 frame is measured; a photo with several codes asks which; a
    token's QR photo fills the token form, and a Google Authenticator export's adds every token in it, once; the camera
    stops when the form closes and when the app is hidden."""
    photos = Path(work, "scan-photos")
    made = subprocess.run([sys.executable, str(ROOT / "Tests/oracles/scan_photos.py"), "--out", str(photos), "--per", "1",
                           "--seed", "18", "--tiers", "photo", "--y4m", str(photos / "camera.y4m"), "--frames-per-image", "4",
                           "--size", "1280x720"], capture_output=True, text=True)
    check(made.returncode == 0, f"the camera video is made: {made.stderr[-300:]}")
    if made.returncode != 0:
        return
    manifest = json.loads((photos / "manifest.json").read_text())
    shown = {next(entry["symbology"] for entry in manifest["images"] if entry["file"] == frame["image"])
             for frame in manifest["y4m"]["frames"]}
    expected = {entry["symbology"]: bytes.fromhex(entry["payload_hex"]) for entry in manifest["images"]
                if entry["tier"] == "photo" and entry["symbology"] in shown}
    # Pictures for "choose a photo": a token's QR, and three codes side by side.
    token_uri = f"otpauth://totp/Scanned:carol@example.com?secret={TOTP_SECRET}&issuer=Scanned"
    subprocess.run([sys.executable, str(ROOT / "Tests/oracles/scan_oracle.py")], check=True, capture_output=True,
                   input=json.dumps([
                       {"zint": {"type": "QRCODE", "data": token_uri, "scale": 4}, "angle": 12, "save": str(photos / "token.png")},
                       {"zint": {"type": "QRCODE", "data": "otpauth-migration://offline?data=CjEKCkhlbGxvId6tvu8SGEV4YW1w"
                                 "bGU6YWxpY2VAZ29vZ2xlLmNvbRoHRXhhbXBsZSABKAEwAhABGAEgACjr4JKdBA%3D%3D", "scale": 4},
                        "save": str(photos / "export.png")},
                       {"beside": [{"zint": {"type": "EANX", "data": "400638133393", "scale": 3}},
                                   {"zint": {"type": "DATAMATRIX", "data": "LOCKER-17", "scale": 4}},
                                   {"zint": {"type": "CODE128", "data": "MEMBER-0042", "scale": 3}}],
                        "save": str(photos / "several.png")},
                   ]).encode())

    server = Server(work + "/scan-server")
    cli = CLI(work + "/scan")
    cli("init")
    email = f"scan-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")
    driver = browser(camera=str(photos / "camera.y4m"))
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": STREAM_PROBE})
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        # Chromium's fake camera starts its video again at each opening unless the device stays open: the test holds
        # a stream of its own (not the page's, so not counted below) so that each Scan sees the video move on.
        kept = driver.execute_async_script("""const done = arguments[arguments.length - 1];
            window.__testOpen({ video: true }).then((stream) => { window.__testKeeper = stream; done(true); }, () => done(false));""")
        check(kept, "the fake camera opens")
        reads = {}
        wrong = []
        deadline = time.monotonic() + 150
        while len(reads) < len(expected) and time.monotonic() < deadline:
            driver.find_element(By.ID, "add-card").click()
            driver.find_element(By.ID, "scan-camera").click()
            try:
                WebDriverWait(driver, 20).until(
                    lambda d: d.find_element(By.ID, "scan-status").text.startswith(("Found", "This")))
            except TimeoutException:
                click(driver, "#editor-cancel")
                continue
            status = driver.find_element(By.ID, "scan-status").text
            token = re.match(r"This (\S+) code is a 2FA token", status)
            if token and expected.get(token.group(1), b"").startswith(b"otpauth"):
                # A token's code, read and rightly turned away by the card form.
                reads[token.group(1)] = expected[token.group(1)]
                click(driver, "#editor-cancel")
                continue
            symbology = driver.execute_script("return document.querySelector('#editor-form [name=symbology]').value")
            payload = driver.execute_script("return document.querySelector('#editor-form [name=payload]').value")
            charset = driver.execute_script("return document.querySelector('#editor-form [name=charset]').value")
            read = payload.encode("utf-8" if charset == "utf-8" else "latin-1")
            name = "itf" if symbology == "itf14" and "itf" in expected and "itf14" not in reads and read == expected.get("itf") else symbology
            if expected.get(name) == read:
                if name not in reads and directory and name == "datamatrix":
                    screenshot(driver, directory, "web-vault-scan.png")
                reads[name] = read
            else:
                wrong.append((symbology, read, status))
            click(driver, "#editor-cancel")
            check_live = driver.execute_script(LIVE_TRACKS)
            if check_live:
                check(False, f"the camera is still on after the form closed ({check_live} live tracks)")
                break
        missing = sorted(set(expected) - set(reads))
        check(not missing, f"the camera reads every symbology, payload byte for byte ({len(reads)} of {len(expected)}; "
                           f"missing {missing})")
        check(not wrong, f"no wrong read from the camera: {wrong}")
        # The reader's time for a 1280x720 frame in this Chromium, once the browser has compiled it fully: the
        # video's pictures, read again and again as frames (stopping at the first symbol).
        frames = []
        for entry in [entry for entry in manifest["images"] if entry["tier"] == "photo"][:8]:
            with Image.open(photos / entry["file"]) as picture:
                grey = picture.convert("L")
                scale = min(1280 / grey.width, 720 / grey.height)
                canvas = Image.new("L", (1280, 720), 0)
                resized = grey.resize((round(grey.width * scale), round(grey.height * scale)), Image.BILINEAR)
                canvas.paste(resized, ((1280 - resized.width) // 2, (720 - resized.height) // 2))
                frames.append(base64.b64encode(canvas.tobytes()).decode())
        times = driver.execute_async_script("""const [frames, done] = [arguments[0], arguments[arguments.length - 1]];
            import('./js/scan.js').then(async ({ loadReader, scanPixels }) => {
              const reader = await loadReader(await fetch('coffer-scan.wasm'));
              const pictures = frames.map((text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0)));
              for (let round = 0; round < 4; round++) for (const picture of pictures) scanPixels(reader, picture, 1280, 720, true);
              const times = [];
              for (let round = 0; round < 5; round++) {
                for (const picture of pictures) {
                  const started = performance.now();
                  scanPixels(reader, picture, 1280, 720, true);
                  times.push(performance.now() - started);
                }
              }
              done(times);
            }, (error) => done(String(error)));""", frames)
        check(isinstance(times, list), f"the reader runs in the page: {times if not isinstance(times, list) else ''}")
        times = sorted(times) if isinstance(times, list) else [float("nan")]
        median = times[len(times) // 2]
        print(f"scan: a 1280x720 camera frame read in {median:.1f} ms (median of {len(times)}) by the WebAssembly reader "
              f"in Chromium; the camera's first frames, while the browser compiles it: "
              f"{(driver.find_element(By.TAG_NAME, 'body').get_attribute('data-scan-ms') or '').replace(',', ', ')} ms")
        # A bound only a broken build exceeds: the goal (30 ms) is measured on a quiet machine and quoted, not asserted.
        check(median <= 200, f"a camera frame is read in {median:.1f} ms (median)")

        # Hidden while the camera is on: it goes off (and the form stays, to scan again). The fake camera's video is
        # full of codes, so a session may read one and turn the camera off by itself within a frame or two of
        # starting (a run here waited 60 s for a live track the read had already ended): the page is made hidden in
        # the same turn in which a live track is first seen, and the tracks are counted in that turn too.
        driver.find_element(By.ID, "add-card").click()
        driver.find_element(By.ID, "scan-camera").click()
        driver.set_script_timeout(90)
        hidden = driver.execute_async_script("""const done = arguments[arguments.length - 1];
            const live = () => (window.__testStreams || []).flatMap((s) => s.getTracks()).filter((t) => t.readyState === 'live').length;
            const started = Date.now();
            const tick = () => {
              if (live() > 0) {
                Object.defineProperty(document, 'hidden', { value: true, configurable: true });
                document.dispatchEvent(new Event('visibilitychange'));
                done({ after: live() });
              } else if (Date.now() - started > 60000) {
                done({ status: document.getElementById('scan-status')?.textContent ?? '' });
              } else {
                // Read and off before a tick saw it live: start it again.
                const status = document.getElementById('scan-status');
                if (status?.textContent.startsWith('Found ')) {
                  status.textContent = '';
                  document.getElementById('scan-camera').click();
                }
                setTimeout(tick, 2);
              }
            };
            tick();""")
        check("after" in hidden, f"the camera starts (within 60 s; the page said: {hidden.get('status')!r})")
        check(hidden.get("after") == 0 and driver.execute_script(LIVE_TRACKS) == 0, "the camera goes off when the app is hidden")
        driver.execute_script("Object.defineProperty(document, 'hidden', { value: false, configurable: true });"
                              "document.dispatchEvent(new Event('visibilitychange'))")
        driver.execute_script("window.__testKeeper.getTracks().forEach((track) => track.stop())")

        # A photo with three codes: the form asks which, and takes the one picked.
        driver.find_element(By.ID, "scan-photo").send_keys(str(photos / "several.png"))
        WebDriverWait(driver, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#scan-choices button")) > 0)
        choices = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#scan-choices button")]
        check(sorted(choices) == ["code128 MEMBER-0042", "datamatrix LOCKER-17", "ean13 4006381333931"],
              f"a photo with several codes offers each: {choices}")
        picked = next(e for e in driver.find_elements(By.CSS_SELECTOR, "#scan-choices button") if e.text.startswith("datamatrix"))
        picked.click()
        fill(driver, "name", "Locker")
        check(driver.execute_script("return document.querySelector('#editor-form [name=payload]').value") == "LOCKER-17",
              "the code picked fills the card")
        save(driver)
        synced(driver)

        # A token's QR, from a photo: the token form is filled and saved; the code is oathtool's.
        driver.find_element(By.CSS_SELECTOR, "[data-tab=codes]").click()
        driver.find_element(By.ID, "add-token").click()
        driver.find_element(By.ID, "scan-photo").send_keys(str(photos / "token.png"))
        WebDriverWait(driver, 20).until(lambda d: d.find_element(By.ID, "scan-status").text != ""
                                        and d.find_element(By.ID, "scan-status").text != "Reading the photo…")
        status = driver.find_element(By.ID, "scan-status").text
        check(status == "Found a token for Scanned.", f"a token's QR photo fills the token form: {status!r}")
        save(driver)
        synced(driver)
        time.sleep(1.2)
        rows = {e.text.split("\n")[0]: e.text.split("\n") for e in driver.find_elements(By.CSS_SELECTOR, "#codes li")}
        scanned = rows.get("Scanned", [])
        check(len(scanned) >= 3 and scanned[2] in oathtool_codes(TOTP_SECRET_HEX, int(time.time())),
              f"the scanned token's code is oathtool's: {scanned}")
        # A Google Authenticator export: its tokens are listed, and Save adds every one; scanned again, nothing is
        # added twice.
        for attempt in range(2):
            driver.find_element(By.ID, "add-token").click()
            driver.find_element(By.ID, "scan-photo").send_keys(str(photos / "export.png"))
            WebDriverWait(driver, 20).until(lambda d: "Google Authenticator export" in d.find_element(By.ID, "scan-status").text)
            listed_tokens = driver.execute_script(
                "return [...document.querySelectorAll('#editor-export li')].map((li) => li.textContent)")
            check(listed_tokens == ["Example (alice@google.com)"], f"the export's tokens are listed: {listed_tokens}")
            check(driver.execute_script("return document.querySelector('#editor-form [name=uri]').closest('label').hidden") is True,
                  "the one-token fields give way to the export's list")
            click(driver, "#editor-save")
            if attempt == 0:
                WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "notice").text == "Added 1 token.")
                synced(driver)
            else:
                WebDriverWait(driver, 10).until(lambda d: "already in the vault" in d.find_element(By.ID, "error").text)
                click(driver, "#editor-cancel")
        time.sleep(1.2)
        rows = {e.text.split("\n")[0]: e.text.split("\n") for e in driver.find_elements(By.CSS_SELECTOR, "#codes li")}
        exported = rows.get("Example", [])
        check(len(exported) >= 3 and exported[2] in oathtool_codes("48656c6c6f21deadbeef", int(time.time())),
              f"the exported token's code is oathtool's: {exported}")
        # A card's code in the token form is refused, and the card form refuses a token.
        driver.find_element(By.ID, "add-token").click()
        driver.find_element(By.ID, "scan-photo").send_keys(str(photos / "several.png"))
        WebDriverWait(driver, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#scan-choices button")) > 0)
        driver.find_elements(By.CSS_SELECTOR, "#scan-choices button")[0].click()
        check("is not a 2FA token" in driver.find_element(By.ID, "scan-status").text, "a card's code is refused in the token form")
        click(driver, "#editor-cancel")
        driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
        driver.find_element(By.ID, "add-card").click()
        driver.find_element(By.ID, "scan-photo").send_keys(str(photos / "token.png"))
        WebDriverWait(driver, 20).until(lambda d: "2FA token" in d.find_element(By.ID, "scan-status").text)
        check(driver.execute_script("return document.querySelector('#editor-form [name=payload]').value") == "",
              "a token's QR is refused in the card form, and nothing is filled")
        click(driver, "#editor-cancel")
        cli("sync")
        listed = cli("list", "--json")
        check('"Locker"' in listed and "Scanned" in listed
              and [item.get("account") for item in json.loads(listed)].count("alice@google.com") == 1,
              "the scanned card, token and export reach the CLI, the export once")
        violations = csp_violations(driver)
        check(not violations, f"no Content-Security-Policy violation while scanning: {violations}")
        lock(driver)
    finally:
        driver.quit()
        server.stop()


def passkeys(driver, work, directory):
    """Passkey unlock on http://localhost (an IP address is no relying party), with Chromium's virtual authenticator:
    added after a passphrase unlock, it opens the vault with the server gone; five failed tries remove it; an
    authenticator without PRF is refused plainly."""
    server = Server(work + "/passkey-server", host="localhost")
    cli = CLI(work + "/passkey")
    cli("init")
    cli("add", "card", "Face card", "--symbology", "qr", input_text="face-42\n")
    email = f"passkey-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", f"http://127.0.0.1:{server.port}", "--email", email, input_text=PASSPHRASE + "\n")
    driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
    options = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
               "isUserVerified": True, "hasPrf": True, "automaticPresenceSimulation": True}
    authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": options})["authenticatorId"]
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        driver.find_element(By.CSS_SELECTOR, "[data-tab=settings]").click()
        driver.find_element(By.ID, "passkey-add").click()
        WebDriverWait(driver, 30).until(lambda d: "unlocks with a passkey" in d.find_element(By.ID, "passkey-status").text
                                        or d.find_element(By.ID, "error").is_displayed())
        check("unlocks with a passkey" in driver.find_element(By.ID, "passkey-status").text,
              f"a passkey is added ({error_text(driver) or 'no error'})")
        screenshot(driver, directory, "web-vault-passkey.png")
        credentials = driver.execute_cdp_cmd("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]
        check(len(credentials) == 1 and credentials[0]["rpId"] == "localhost", f"the authenticator holds it: {len(credentials)}")
        lock(driver)
        server.stop()
        driver.get(server.url + "/app/")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "passkey-unlock").is_displayed())
        driver.find_element(By.ID, "passkey-unlock").click()
        wait_screen(driver, "vault")
        check("Face card" in driver.find_element(By.ID, "cards").text, "with the server gone, the passkey unlocks the vault")
        lock(driver)
        driver.execute_cdp_cmd("WebAuthn.setUserVerified", {"authenticatorId": authenticator, "isUserVerified": False})
        for attempt in range(5):
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "passkey-unlock").is_displayed())
            driver.find_element(By.ID, "passkey-unlock").click()
            WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "error").is_displayed())
            if attempt < 4:
                time.sleep(0.3)
        time.sleep(0.5)
        check("the passkey was removed" in error_text(driver) and not driver.find_element(By.ID, "passkey-unlock").is_displayed(),
              f"five failed passkey unlocks remove it: {error_text(driver)!r}")
        driver.find_element(By.ID, "passphrase").send_keys(PASSPHRASE)
        driver.find_element(By.ID, "unlock").click()
        wait_screen(driver, "vault")
        check("Face card" in driver.find_element(By.ID, "cards").text, "the passphrase still opens it")
        driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        authenticator = driver.execute_cdp_cmd("WebAuthn.addVirtualAuthenticator", {"options": {**options, "hasPrf": False}})["authenticatorId"]
        driver.find_element(By.CSS_SELECTOR, "[data-tab=settings]").click()
        driver.find_element(By.ID, "passkey-add").click()
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "error").is_displayed())
        check("no PRF" in error_text(driver), f"an authenticator without PRF is refused plainly: {error_text(driver)!r}")
        lock(driver)
    finally:
        driver.execute_cdp_cmd("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        server.stop()


def fill(driver, name, value):
    field = driver.find_element(By.CSS_SELECTOR, f"#editor-form [name={name}]")
    if field.tag_name == "select":
        driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))", field, value)
    else:
        field.clear()
        field.send_keys(value)


def open_card(driver, name):
    """Opens the barcode screen of the card listed under `name` (the list may be redrawn by a sync meanwhile)."""
    def opened(d):
        rows = [r for r in d.find_elements(By.CSS_SELECTOR, "#cards li.open") if r.text.split("\n")[0] == name]
        if rows:
            rows[0].click()
        return d.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "barcode"
    try:
        WebDriverWait(driver, 30, ignored_exceptions=(StaleElementReferenceException,)).until(opened)
    except TimeoutException:
        raise AssertionError(f"no card {name!r} in the list: {driver.find_element(By.ID, 'cards').text!r}") from None


def save(driver):
    driver.find_element(By.ID, "editor-save").click()
    wait_screen(driver, "vault")


def synced(driver):
    """Until the page's sync after a write has ended."""
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") != "running")
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") in ("done", "offline", "failed"))


def writes(driver, server, cli, directory):
    """Cards, tokens and keys added and edited in the page reach the CLI field for field (its own verifier checks every
    manifest the page made); the page writes offline and pushes later; an edit on both sides at once leaves a conflict
    copy on both; a one-time pass is marked used, a card archived and another deleted; a card's photo is shown."""
    # A photo added in the CLI: its parts are joined, checked and shown under the barcode.
    photo = Path(cli.env["HOME"], "front.png")
    Image.new("RGB", (64, 40), (200, 30, 30)).save(photo)
    cli("edit", "Pushed later", "--photo", "front", str(photo))
    cli("sync")
    click(driver, "#sync-now")
    synced(driver)
    driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
    open_card(driver, "Pushed later")
    WebDriverWait(driver, 10).until(lambda d: d.execute_script(
        "const image = document.querySelector('#barcode-photos img'); return image && image.complete && image.naturalWidth"))
    size = driver.execute_script("const image = document.querySelector('#barcode-photos img'); return [image.naturalWidth, image.naturalHeight]")
    check(size == [64, 40], f"the card's photo is shown: {size}")
    driver.find_element(By.ID, "barcode-close").click()
    wait_screen(driver, "vault")
    check(not driver.find_elements(By.CSS_SELECTOR, "#barcode-photos img"), "closing the barcode drops the photo")
    driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
    driver.find_element(By.ID, "add-card").click()
    wait_screen(driver, "editor")
    fill(driver, "name", "Till card")
    fill(driver, "symbology", "ean13")
    fill(driver, "payload", "400638133393")
    hint = driver.find_element(By.ID, "editor-digits").text
    check("4006381333931" in hint, f"the form shows the check digit the symbol will carry: {hint!r}")
    fill(driver, "tags", "food, Food, till")
    fill(driver, "networks", "Costco")
    screenshot(driver, directory, "web-vault-add-card.png")
    save(driver)
    synced(driver)
    cli("sync")
    card = json.loads(cli("show", "Till card", "--json"))
    check((card["symbology"], card["payload"], card["tags"], card["networks"]) == ("ean13", "400638133393", ["food", "Food", "till"], ["costco"]),
          f"a card added in the page is the CLI's, field for field: {card}")

    # A bad payload: one clear error, nothing written.
    driver.find_element(By.ID, "add-card").click()
    fill(driver, "name", "Bad")
    fill(driver, "symbology", "ean13")
    fill(driver, "payload", "12345X")
    driver.find_element(By.ID, "editor-save").click()
    time.sleep(0.3)
    check("payload cannot be drawn" in error_text(driver) and driver.find_element(By.TAG_NAME, "body").get_attribute("data-screen") == "editor",
          f"a payload the symbology refuses is one error and nothing is written: {error_text(driver)!r}")
    driver.find_element(By.ID, "editor-cancel").click()

    # An HOTP token pasted as a link: each code moves the counter on before it shows, as in the CLI.
    driver.find_element(By.CSS_SELECTOR, "[data-tab=codes]").click()
    driver.find_element(By.ID, "add-token").click()
    fill(driver, "uri", f"otpauth://hotp/Counter:ada?secret={TOTP_SECRET}&issuer=Counter&counter=5")
    check(driver.find_element(By.CSS_SELECTOR, "#editor-form [name=issuer]").get_attribute("value") == "Counter",
          "pasting the link fills in the issuer")
    save(driver)
    synced(driver)
    next(r for r in driver.find_elements(By.CSS_SELECTOR, "#codes li") if r.text.startswith("Counter")).click()
    synced(driver)
    # The code stays on screen through the sync that pushes the new counter (which redraws the list).
    counter_row = lambda: next(r for r in driver.find_elements(By.CSS_SELECTOR, "#codes li") if r.text.startswith("Counter"))
    WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: "·" not in counter_row().text.split("\n")[2])
    shown = counter_row().text.split("\n")[2]
    expected = subprocess.run(["oathtool", "--hotp", "-c", "5", TOTP_SECRET_HEX], capture_output=True, text=True).stdout.strip()
    check(shown == expected, f"the HOTP code of counter 5 is oathtool's ({shown} / {expected})")
    synced(driver)
    cli("sync")
    after = cli("code", "Counter").strip()
    expected6 = subprocess.run(["oathtool", "--hotp", "-c", "6", TOTP_SECRET_HEX], capture_output=True, text=True).stdout.strip()
    check(after == expected6, "the CLI goes on from counter 6: no code is shown twice")

    # Offline: a key written with the server gone waits, is shown, and is pushed when it answers.
    server.stop()
    driver.find_element(By.CSS_SELECTOR, "[data-tab=secrets]").click()
    driver.find_element(By.ID, "add-credential").click()
    fill(driver, "name", "Offline key")
    fill(driver, "value", "sk-written-offline-5")
    save(driver)
    synced(driver)
    status = driver.find_element(By.ID, "sync-status").text
    check("Offline" in status and "1 waiting to be pushed" in status and "Offline key" in driver.find_element(By.ID, "secrets").text,
          f"written offline, the key is shown and waits: {status!r}")
    server.start()
    click(driver, "#sync-now")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "done")
    cli("sync")
    check("Offline key" in cli("list"), "back online, the key written offline reaches the CLI")

    # An edit made on both sides at once.
    cli("edit", "Till card", "--name", "Till card (CLI)")
    cli("sync")
    driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
    open_card(driver, "Till card")
    driver.find_element(By.ID, "barcode-edit").click()
    fill(driver, "name", "Till card (web)")
    save(driver)
    synced(driver)
    listed = driver.find_element(By.ID, "cards").text
    status = driver.find_element(By.ID, "sync-status").text
    check("Till card (CLI)" in listed and "Till card (web)" in listed and "1 conflict copy" in status,
          f"both edits are kept, the page's as a conflict copy: {status!r}")
    screenshot(driver, directory, "web-vault-conflict.png")
    cli("sync")
    listed = cli("list", "--kind", "card")
    check("Till card (CLI)" in listed and "Till card (web)" in listed, "the CLI sees both")

    # A one-time pass marked used, a card archived, another deleted.
    cli("add", "card", "Return slip", "--symbology", "qr", "--one-time", input_text="https://example.com/r/77\n")
    cli("sync")
    click(driver, "#sync-now")
    synced(driver)
    open_card(driver, "Return slip")
    driver.find_element(By.ID, "barcode-use").click()
    wait_screen(driver, "vault")
    open_card(driver, "Till card (web)")
    driver.find_element(By.ID, "barcode-edit").click()
    driver.find_element(By.ID, "editor-archive").click()
    wait_screen(driver, "vault")
    open_card(driver, "Grocer")
    driver.find_element(By.ID, "barcode-edit").click()
    driver.find_element(By.ID, "editor-delete").click()
    driver.switch_to.alert.accept()
    wait_screen(driver, "vault")
    synced(driver)
    cli("sync")
    listed = cli("list", "--kind", "card")
    check("Return slip  Used" in listed.replace("   ", "  ") or ("Return slip" in listed and "Used" in listed),
          f"the pass is used in the CLI: {listed!r}")
    check("Till card (web)" not in listed and "Till card (web)" in cli("list", "--kind", "card", "--archived")
          and "Grocer" not in cli("list", "--kind", "card", "--archived"),
          "the archived card is archived in the CLI and the deleted one gone")
    check("archived: show them" in driver.find_element(By.ID, "cards").text, "the page offers the archived cards")


def till(driver, directory):
    """At the till: a 320-px phone at three device pixels per CSS pixel, upright then sideways."""
    driver.find_element(By.CSS_SELECTOR, "[data-tab=cards]").click()
    body = driver.find_element(By.TAG_NAME, "body")
    for width, height, orientation in ((320, 640, "portraitPrimary"), (640, 320, "landscapePrimary")):
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 3, "mobile": True,
            "screenOrientation": {"type": orientation, "angle": 0 if width < height else 90}})
        for name, payload, number in (("Long loyalty", b"COFFER-LOYALTY-MEMBER-ab-0042x", "COFFER-LOYALTY-MEMBER-ab-0042x"),
                                      ("Grocer", b"4006381333931", "4006381333931")):
            rows = driver.find_elements(By.CSS_SELECTOR, "#cards li.open")
            next(r for r in rows if r.text.split("\n")[0] == name).click()
            wait_screen(driver, "barcode")
            time.sleep(0.3)
            canvas = driver.execute_script("const c = document.getElementById('barcode-canvas');"
                                           "return [c.width, c.getBoundingClientRect().width, window.innerWidth]")
            scale = int(body.get_attribute("data-barcode-scale"))
            modules = int(body.get_attribute("data-barcode-modules"))
            png = screenshot(driver, directory if name == "Long loyalty" else None, f"web-vault-till-{orientation[:-7]}.png")
            shown = driver.find_element(By.ID, "barcode-number").text
            turn = driver.find_element(By.ID, "barcode-turn").is_displayed()
            check(payload in decode(png) and canvas[0] == modules * scale and canvas[1] <= canvas[2] and scale >= 2
                  and shown.replace("\n", "") == number,
                  f"{name} at {width}x{height}: {modules} modules at {scale} device pixels each, "
                  f"{canvas[1]:.0f} of {canvas[2]} CSS px, reads back; number {shown!r}; turn hint {turn}")
            if name == "Long loyalty" and width < height:
                check(turn, "upright, a long linear code suggests turning the phone")
            driver.find_element(By.ID, "barcode-close").click()
            wait_screen(driver, "vault")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def lock_leaves_nothing(driver, url, secrets):
    """After Lock, neither the page's DOM nor its JavaScript heap holds a secret it showed. The page is loaded afresh
    and driven without handing any element that shows a secret to Selenium: DevTools keeps what it returned alive."""
    driver.get(url + "/app/")
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "passphrase").is_displayed())
    driver.find_element(By.ID, "passphrase").send_keys(PASSPHRASE)
    click(driver, "#unlock")
    wait_screen(driver, "vault")
    wait_synced(driver)
    click(driver, "#cards li.open")
    wait_screen(driver, "barcode")
    click(driver, "#barcode-close")
    click(driver, "[data-tab=secrets]")
    driver.execute_script("for (const value of document.querySelectorAll('#secrets .masked')) value.parentNode.click()")
    shown = driver.execute_script("return [...document.querySelectorAll('#secrets .masked')].map((value) => value.textContent.length)")
    check(len(secrets[2]) in shown, f"before Lock, the credentials are shown ({shown} characters)")
    click(driver, "[data-tab=codes]")
    time.sleep(1.2)
    click(driver, "#lock")
    time.sleep(0.5)
    page = driver.execute_script("return document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join(' ')")
    check(not [secret for secret in secrets if secret in page], f"after Lock the DOM holds none of the secrets: {[s for s in secrets if s in page]}")
    tools = DevTools(driver)
    try:
        heap = tools.heap_snapshot(tools.page(url))
    finally:
        tools.close()
    if os.environ.get("COFFER_HEAP_DUMP"):
        Path(os.environ["COFFER_HEAP_DUMP"]).write_text(heap)
    found = [secret for secret in secrets if secret in heap]
    check(not found and len(heap) > 100_000, f"after Lock the JavaScript heap ({len(heap) // 1024} KB) holds none of them: {found}")


def bench(driver, count, work, _):
    """The phone app's speed with `count` cards, against the CLI on the same vault in the same run: unlock to the card
    list (PBKDF2 at 600,000 iterations included) the first time and from this browser's copy, an offline cold start,
    a card added offline and its push when the server is back, a barcode, and the app's size."""
    server = Server(work + "/bench-server")
    cli = CLI(work + "/bench")
    cli("init")
    cards = [{"id": str(uuid.uuid4()), "name": f"Card {i:04d}", "barcode_type": "code128", "payload": f"{100000 + i}",
              "payload_encoding": "utf-8", "tags": ["bench"], "network_ids": [], "one_time": False, "metadata": {},
              "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"} for i in range(count)]
    export = {"format": "coffer-export", "version": 1,
              "user": {"id": str(uuid.uuid4()), "email": None, "created_at": "2026-01-01T00:00:00Z"},
              "cards": cards, "otp": [], "credentials": [], "signing_keys": [], "notes": []}
    path = Path(work, "bench.json")
    path.write_text(json.dumps(export))
    cli("import", "--from", "coffer-json", str(path))
    email = f"bench-{uuid.uuid4().hex[:8]}@example.org"
    cli("sync", "register", "--server", server.url, "--email", email, input_text=PASSPHRASE + "\n")
    body = lambda: driver.find_element(By.TAG_NAME, "body")
    try:
        log_in(driver, server.url, email, PASSPHRASE)
        first = float(body().get_attribute("data-unlock-ms"))
        check(len(driver.find_elements(By.CSS_SELECTOR, "#cards li.open")) == count, f"{count} cards listed")
        lock(driver)
        local = []
        for _ in range(3):
            log_in(driver, server.url, email, PASSPHRASE)
            local.append(float(body().get_attribute("data-unlock-ms")))
            driver.find_elements(By.CSS_SELECTOR, "#cards li.open")[0].click()
            wait_screen(driver, "barcode")
            barcode = float(body().get_attribute("data-barcode-ms"))
            driver.find_element(By.ID, "barcode-close").click()
            lock(driver)
        # The CLI on the same vault, in the same run: whole processes listing it (median of 5).
        listing = []
        for _ in range(5):
            started = time.monotonic()
            cli("list")
            listing.append((time.monotonic() - started) * 1000)
        listing.sort()

        # Offline cold start: the app closed (a blank page), the server gone; from opening the app to the list.
        server.stop()
        driver.get("about:blank")
        started = time.monotonic()
        driver.get(server.url + "/app/")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "passphrase").is_displayed())
        shell = (time.monotonic() - started) * 1000
        driver.find_element(By.ID, "passphrase").send_keys(PASSPHRASE)
        driver.find_element(By.ID, "unlock").click()
        wait_screen(driver, "vault")
        cold = shell + float(body().get_attribute("data-unlock-ms"))
        driver.find_element(By.ID, "add-card").click()
        fill(driver, "name", "Added offline")
        fill(driver, "payload", "OFFLINE-1")
        save(driver)
        stored = float(body().get_attribute("data-write-ms"))
        synced(driver)
        server.start()
        click(driver, "#sync-now")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-sync") == "done")
        pushed = float(body().get_attribute("data-push-ms"))
        caught_up = float(body().get_attribute("data-sync-ms"))
        cli("sync")
        check("Added offline" in cli("list"), "the card added offline reaches the CLI")
        lock(driver)
    finally:
        server.stop()
    size = sum(len(gzip.compress(f.read_bytes(), 9)) for f in APP.rglob("*") if f.is_file())
    print(f"bench ({count} cards): first unlock {first:.0f} ms; unlock from this browser's copy {min(local):.0f} ms "
          f"(best of 3: {', '.join(f'{t:.0f}' for t in local)}); coffer list {listing[2]:.0f} ms; offline cold start "
          f"{cold:.0f} ms (shell {shell:.0f}); card stored offline {stored:.1f} ms; pushed {pushed:.0f} ms after the "
          f"server came back (and the feed read by {caught_up:.0f} ms); barcode {barcode:.1f} ms; app {size / 1024:.1f} KB gzipped")
    check(min(local) <= 1000, "unlock to the card list ≤ 1 s")
    check(cold <= 1500, "offline cold start to the list ≤ 1.5 s")
    check(stored <= 50, "a card added offline is stored ≤ 50 ms")
    check(pushed <= 300, "pushed ≤ 300 ms after the network returns")
    check(barcode <= 50, "a barcode ≤ 50 ms")
    check(size <= 300 * 1024, "the app shell ≤ 300 KB gzipped")


if __name__ == "__main__":
    main()
