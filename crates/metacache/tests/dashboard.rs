//! The built-in dashboard in a real headless browser (Debian's Chromium driven by its
//! ChromeDriver over the W3C WebDriver protocol): the page loads from the binary with no console
//! error, lists the sample catalogs, drills down to a catalog and to one of its caches, draws that
//! cache's miss-ratio curve and its last-hour charts, and its what-if control writes the
//! `ALTER CATALOG` statement for a proposed limit — which "Apply" runs through the API. With an
//! `http_token` the page asks for it before it shows anything. Screenshots go to
//! `<target>/dashboard-screenshots/`.
//!
//! `make test` installs `chromium` and `chromium-driver` (scripts/test-deps.sh); without them
//! the test says SKIPPED.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const CHROMIUM: [&str; 2] = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
const DRIVER: &str = "/usr/bin/chromedriver";

struct Driver {
    process: Child,
    url: String,
    session: String,
    agent: ureq::Agent,
}

impl Driver {
    /// Starts ChromeDriver on a free port and a headless Chromium session; `None` when either
    /// is not installed.
    fn start() -> Option<Driver> {
        let chromium = CHROMIUM.iter().find(|p| std::path::Path::new(p).exists())?;
        if !std::path::Path::new(DRIVER).exists() {
            return None;
        }
        let port = free_port();
        let process = Command::new(DRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let url = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while agent.get(&format!("{url}/status")).call().is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not answer in 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,1100"]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let mut driver = Driver {
            process,
            url,
            session: String::new(),
            agent,
        };
        let created = driver.call("POST", "/session", Some(capabilities));
        driver.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        Some(driver)
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.url);
        let mut response = match method {
            "GET" => self.agent.get(&url).call(),
            "DELETE" => self.agent.delete(&url).call(),
            _ => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(body.unwrap_or(json!({})).to_string().as_bytes()),
        }
        .expect("webdriver request");
        let text = response.body_mut().read_to_string().unwrap_or_default();
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        value.get("value").cloned().unwrap_or(value)
    }

    fn session(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn open(&self, url: &str) {
        self.session("POST", "/url", Some(json!({ "url": url })));
    }

    fn script(&self, script: &str, args: Value) -> Value {
        self.session(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Waits (at most 20 s) until the page says it rendered `hash` (or failed).
    fn ready(&self, hash: &str) -> String {
        let started = Instant::now();
        loop {
            let ready = self.script("return document.body.dataset.ready || ''", json!([]));
            let ready = ready.as_str().unwrap_or_default().to_owned();
            if ready == hash || ready == "error" {
                return ready;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the page did not render {hash} in 20 s (at {ready:?})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn click(&self, css: &str) {
        let element = self.session(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        );
        let id = element
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}: {element}"))
            .to_owned();
        self.session("POST", &format!("/element/{id}/click"), None);
    }

    fn screenshot(&self, name: &str) -> PathBuf {
        let shot = self.session("GET", "/screenshot", None);
        let data = shot.as_str().expect("a screenshot");
        let bytes = base64_decode(data);
        let dir = target_dir().join("dashboard-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, bytes).expect("screenshot written");
        path
    }

    /// The browser's console messages of level SEVERE since the last call.
    fn console_errors(&self) -> Vec<String> {
        let log = self.session("POST", "/se/log", Some(json!({"type": "browser"})));
        log.as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["level"] == "SEVERE")
            .map(|e| e["message"].as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0);
    for c in text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
    {
        let Some(v) = ALPHABET.iter().position(|a| *a == c) else {
            continue;
        };
        buffer = (buffer << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

fn text(driver: &Driver, css: &str) -> String {
    driver
        .script(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null",
            json!([css]),
        )
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A browser and a node with the sample catalogs and the extra environment `env`; `None` (the
/// test says SKIPPED) without Chromium.
fn browser_and_node(env: &[(&str, &str)]) -> Option<(Driver, tempfile::TempDir, Server)> {
    let Some(driver) = Driver::start() else {
        eprintln!("SKIPPED: chromium and chromedriver are not installed (scripts/test-deps.sh)");
        return None;
    };
    let (tmp, data) = data_dir();
    let mut env = env.to_vec();
    env.push(("METACACHE_SAMPLE_CATALOG", "true"));
    let server = Server::start(&data, &env);
    Some((driver, tmp, server))
}

#[test]
fn the_dashboard_drills_down_to_a_curve_and_writes_the_statement() {
    let Some((driver, _tmp, server)) = browser_and_node(&[(
        "METACACHE_EXTERNAL_META_CACHE_HISTORY_INTERVAL_SECONDS",
        "1",
    )]) else {
        return;
    };
    // Traffic on the sample catalogs: repeated planning questions, some of them twice.
    for round in 0..30 {
        server.query("SHOW PARTITIONS FROM sample.sales.orders");
        server.query("DESC sample.sales.orders");
        if round % 3 == 0 {
            server.query("SHOW TABLES FROM sample.web");
        }
    }
    std::thread::sleep(Duration::from_millis(2500)); // two history samples

    let page = format!("{}/", server.http);
    driver.open(&page);
    assert_eq!(driver.ready("#"), "#", "the node view renders");
    let catalogs = driver.script(
        "return [...document.querySelectorAll('#catalogs tr[data-catalog]')].map(r => r.dataset.catalog)",
        json!([]),
    );
    for name in ["sample", "sample_iceberg", "sample_paimon", "sample_lance"] {
        assert!(
            catalogs
                .as_array()
                .is_some_and(|a| a.iter().any(|c| c == name)),
            "{name} listed: {catalogs}"
        );
    }
    let shot = driver.screenshot("1-node");
    eprintln!("screenshot {}", shot.display());

    // The catalog's what-if at a point of its curve: split as advised (the default), the
    // catalog's limit and each cache's share of the best split, the statement the API's split
    // gives, at the split's predicted hit rate; shared, the catalog's limit alone at the
    // catalog point's own rate. The catalog's curve moves a little with no traffic (its model
    // weighs the caches by their request rates, each measured over its own window), so the
    // page is read between two fetches of the advice: the statement is the one both give, the
    // rate shown one between theirs.
    let started = Instant::now();
    loop {
        let before = catalog_points(&server);
        driver.script("location.hash = ''", json!([]));
        assert_eq!(driver.ready("#"), "#", "the node view renders");
        driver.click("#catalogs tr[data-catalog='sample']");
        assert_eq!(driver.ready("#catalog/sample"), "#catalog/sample");
        let middle = before.len() / 2;
        let point = &before[middle];
        let size = exact_size(point["cache_bytes"].as_u64().expect("cache_bytes"));
        driver.script(
            "const i = document.getElementById('whatif-size'); i.value = arguments[0];
             i.dispatchEvent(new Event('input'));",
            json!([size]),
        );
        let split = (
            text(&driver, "#whatif-statement"),
            text(&driver, "#whatif-rate"),
        );
        driver.screenshot("2-catalog");
        driver.script(
            "const m = document.getElementById('whatif-mode'); m.value = 'shared';
             m.dispatchEvent(new Event('change'));",
            json!([]),
        );
        let shared = (
            text(&driver, "#whatif-statement"),
            text(&driver, "#whatif-rate"),
        );
        let after = catalog_points(&server);
        let statements = |points: &[Value]| {
            points
                .iter()
                .map(|p| (p["cache_bytes"].clone(), p["split"].clone()))
                .collect::<Vec<_>>()
        };
        if statements(&after) != statements(&before) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "the sample catalog's splits kept changing for 60 s"
            );
            continue;
        }
        assert_eq!(split.0, split_statement("`sample`", point));
        assert!(
            split.0.contains(".max-weight' = '") && split.0.contains(".enable' = '"),
            "each cache's share: {}",
            split.0
        );
        let rates = |field: &str| {
            let rate = |points: &[Value]| points[middle][field].as_f64().expect(field);
            (rate(&before), rate(&after))
        };
        assert_shown_rate(&split.1, rates("split_hit_rate"));
        assert_eq!(
            shared.0,
            format!("ALTER CATALOG `sample` SET PROPERTIES ('meta.cache.max-weight' = '{size}')")
        );
        assert_shown_rate(&shared.1, rates("hit_rate"));
        break;
    }
    let drawn = driver.script(
        "return [...document.querySelectorAll('#curve path.series')].map(p => p.dataset.name)",
        json!([]),
    );
    assert_eq!(
        drawn,
        json!(["one shared limit", "split among its caches"]),
        "both curves drawn"
    );
    driver.screenshot("2b-catalog-shared");

    // The busiest cache of the catalog.
    let busiest = driver.script(
        "const rows = [...document.querySelectorAll('#caches tr[data-entry]')];
         rows.sort((a, b) => Number(b.children[4].textContent.replace(/,/g, '')) - Number(a.children[4].textContent.replace(/,/g, '')));
         return rows.length ? [rows[0].dataset.engine, rows[0].dataset.entry] : null",
        json!([]),
    );
    let engine = busiest[0].as_str().expect("a cache row").to_owned();
    let entry = busiest[1].as_str().expect("a cache row").to_owned();
    driver.click(&format!(
        "#caches tr[data-entry='{entry}'][data-engine='{engine}']"
    ));
    let ready = driver.ready(&format!("#catalog/sample/{engine}/{entry}"));
    assert_ne!(ready, "error", "{}", text(&driver, "#status"));

    let drawn = driver.script(
        "return { series: document.querySelectorAll('#curve path.series').length,
                  points: document.querySelectorAll('#curve circle.point').length,
                  charts: document.querySelectorAll('.card svg').length }",
        json!([]),
    );
    assert!(drawn["series"].as_u64() >= Some(1), "a curve: {drawn}");
    assert!(drawn["points"].as_u64() >= Some(1), "its points: {drawn}");
    assert!(
        drawn["charts"].as_u64() >= Some(5),
        "curve and four hour charts: {drawn}"
    );

    // The what-if control: a proposed limit, its predicted hit rate, the statement.
    driver.script(
        "const i = document.getElementById('whatif-size'); i.value = '64MB';
         i.dispatchEvent(new Event('input'));",
        json!([]),
    );
    let statement = text(&driver, "#whatif-statement");
    let (status, advice) = server.http("GET", "/api/v1/catalogs/sample/advice", None, None);
    assert_eq!(status, 200, "{advice}");
    let advice: Value = serde_json::from_str(&advice).expect("JSON");
    let property = advice["caches"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["entry_name"] == entry.as_str()))
        .and_then(|c| c["property"].as_str())
        .expect("the cache's property")
        .to_owned();
    assert!(property.ends_with(".max-weight"), "{property}");
    assert_eq!(
        statement,
        format!("ALTER CATALOG `sample` SET PROPERTIES ('{property}' = '64MB')")
    );
    let rate = text(&driver, "#whatif-rate");
    assert!(rate.ends_with('%'), "a predicted hit rate: {rate:?}");
    driver.screenshot("3-entry");

    // Apply: the statement runs through the API.
    driver.click("#whatif-apply");
    let started = Instant::now();
    while !text(&driver, "#whatif-result").starts_with("Applied") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not applied: {}",
            text(&driver, "#whatif-result")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let created = server.query("SHOW CREATE CATALOG sample");
    assert!(
        created.contains(&format!("\"{property}\" = \"64MB\"")),
        "{created}"
    );

    let errors = driver.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// The points of the sample catalog's curve, as the advice API gives them.
fn catalog_points(server: &Server) -> Vec<Value> {
    let (status, advice) = server.http("GET", "/api/v1/catalogs/sample/advice", None, None);
    assert_eq!(status, 200, "{advice}");
    let advice: Value = serde_json::from_str(&advice).expect("JSON");
    advice["catalog"]["points"]
        .as_array()
        .cloned()
        .expect("a catalog curve")
}

/// A hit rate the page shows ("83.4 %") is, to the digit shown, one between `rates` (two
/// reads of the rate the page was drawn from, one before and one after).
fn assert_shown_rate(shown: &str, rates: (f64, f64)) {
    let percent: f64 = shown
        .strip_suffix('%')
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("a hit rate: {shown:?}"));
    let (low, high) = (100.0 * rates.0.min(rates.1), 100.0 * rates.0.max(rates.1));
    assert!(
        percent >= low - 0.051 && percent <= high + 0.051,
        "shown {shown}, predicted {rates:?}"
    );
}

#[test]
fn with_a_token_the_page_asks_for_it() {
    let Some((driver, _tmp, server)) =
        browser_and_node(&[("METACACHE_HTTP_TOKEN", "s3cret-token")])
    else {
        return;
    };
    driver.open(&format!("{}/", server.http));
    assert_eq!(driver.ready("#"), "error", "no data without the token");
    assert!(
        text(&driver, "#status").contains("token"),
        "{}",
        text(&driver, "#status")
    );
    driver.script(
        "const t = document.getElementById('token'); t.value = arguments[0];
         t.dispatchEvent(new Event('change'));",
        json!(["s3cret-token"]),
    );
    assert_eq!(driver.ready("#"), "#", "{}", text(&driver, "#status"));
    let rows = driver.script(
        "return document.querySelectorAll('#catalogs tr[data-catalog]').length",
        json!([]),
    );
    assert_eq!(rows, json!(4), "the sample catalogs");
}
