"""`dataclay dashboard` driven in headless Chromium (Debian's chromium and chromium-driver, through
Selenium): a refused and a good log-in, the backends of a running cluster, an object found by its
alias and an unknown alias, a backend's page, the call charts, a screenshot that is not blank, an
expired session, and no content-security-policy violation on the way."""
import io
import json
import shutil
import time

import pytest

from harness.dashboard import Dashboard

selenium = pytest.importorskip("selenium", reason="requirements-dev.txt installs selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.timeout(300)

CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def cluster(request):
    from conftest import started_cluster
    cluster = started_cluster(backends=2)
    request.addfinalizer(cluster.stop)
    cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
p = Person("browsed", 7)
p.make_persistent(alias="browsed-person")
for _ in range(20):
    p.birthday()
""")
    return cluster


@pytest.fixture
def browser():
    if CHROMEDRIVER is None:
        pytest.fail("chromedriver is missing: scripts/install-deps.sh installs Debian's chromium-driver")
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000",
                     "--disable-gpu"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def wait(driver, seconds: float = 20):
    """Waits, looking again when the page redrew what it looked at (the overview redraws every 5 s)."""
    return WebDriverWait(driver, seconds, ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))


def log_in(driver, url: str, user: str, password: str) -> None:
    driver.get(url)
    wait(driver).until(seen.presence_of_element_located((By.ID, "login-form")))
    driver.find_element(By.ID, "user").clear()
    driver.find_element(By.ID, "user").send_keys(user)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "login-button").click()


def csp_violations(driver) -> list:
    return [e["message"] for e in driver.get_log("browser")
            if "Content Security Policy" in e["message"] or "Refused to" in e["message"]]


def not_blank(png: bytes) -> tuple[int, float]:
    """(distinct colours, share of pixels unlike the most common one) of a screenshot."""
    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24)
    background = max(colours)[0]
    total = image.width * image.height
    return len(colours), 1 - background / total


def backend_rows(driver) -> list:
    """The overview's backend rows as {id, name, text}, read in one step."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll("tr.backend")).map((row) => ({
            id: row.dataset.backendId, name: row.querySelector("a").textContent, text: row.innerText}));""")


def search(driver, text: str) -> None:
    box = driver.find_element(By.ID, "search-box")
    box.clear()
    box.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "#search-form button").click()


def test_an_administrator_logs_in_sees_the_backends_finds_an_object_and_the_page_is_drawn(cluster, browser,
                                                                                          tmp_path):
    with Dashboard(cluster) as dashboard:
        # a wrong password: a message, and still the log-in form
        log_in(browser, dashboard.url, cluster.admin_user(), "wrong")
        error = wait(browser).until(seen.visibility_of_element_located((By.ID, "login-error")))
        assert error.text == "wrong account name or password"
        # log in: the backends of the running cluster
        log_in(browser, dashboard.url, cluster.admin_user(), cluster.admin_password())
        wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.backend")) == 2)
        rows = backend_rows(browser)            # read at once: the overview redraws every 5 s
        assert len(rows) == 2 and all("alive" in row["text"] and "kv" in row["text"] for row in rows)
        assert browser.find_element(By.ID, "who").text == cluster.admin_user()
        # the call charts appear once the sampler has two rounds (the page refreshes every 5 s)
        wait(browser, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".charts canvas")) == 2)
        # find the object by its alias
        search(browser, "browsed-person")
        result = wait(browser).until(seen.visibility_of_element_located((By.ID, "locate-result")))
        assert "people.model.Person" in result.text and "browsed-person" in result.text
        location = json.loads(cluster.run_client("""
from dataclay import api
api.init()
from people.model import Person
import json
print(json.dumps(str(Person.get_by_alias("browsed-person").get_location())))
""").stdout.strip().splitlines()[-1])
        master = result.find_element(By.CSS_SELECTOR, ".master").text
        names = {row["id"]: row["name"] for row in rows}
        assert names[location] in master
        # an unknown alias says so
        search(browser, "no-such-alias")
        missing = wait(browser).until(seen.visibility_of_element_located((By.ID, "locate-error")))
        assert "no object has the alias 'no-such-alias'" in missing.text
        # the page of the backend that serves the object, with the calls it served
        browser.get(dashboard.url + "/#/backend/" + location)
        title = wait(browser).until(seen.visibility_of_element_located((By.ID, "backend-name")))
        assert title.text.startswith(names[location]) and "alive" in title.text
        wait(browser).until(lambda d: "CallMethod" in d.find_element(By.CSS_SELECTOR, "table.rpcs").text)
        # a screenshot that shows something
        browser.get(dashboard.url + "/#/")
        wait(browser, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".charts canvas")) == 2)
        time.sleep(0.5)
        png = browser.get_screenshot_as_png()
        (tmp_path / "dashboard.png").write_bytes(png)
        colours, drawn = not_blank(png)
        assert colours > 50 and drawn > 0.05, (colours, drawn)
        assert csp_violations(browser) == []


def test_an_expired_session_sends_the_browser_back_to_the_log_in_form_with_a_message(cluster, browser):
    with Dashboard(cluster, "--idle-minutes", "0.03") as dashboard:
        log_in(browser, dashboard.url, cluster.admin_user(), cluster.admin_password())
        wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.backend")) == 2)
        time.sleep(2.5)
        browser.get(dashboard.url + "/#/models")   # the page is the log-in form again: the session is gone
        wait(browser).until(seen.presence_of_element_located((By.ID, "login-form")))
        # a page already open learns it from the API
        log_in(browser, dashboard.url, cluster.admin_user(), cluster.admin_password())
        wait(browser).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "tr.backend")) == 2)
        time.sleep(2.5)
        browser.execute_script("window.location.hash = '#/models'")
        error = wait(browser).until(seen.visibility_of_element_located((By.ID, "login-error")))
        assert error.text == "Your session expired; log in again."
        assert csp_violations(browser) == []
