//! A real Prometheus scrapes the binary and evaluates every PromQL expression of
//! docs/metrics.md (issue 14): the documented queries parse, run, and the hit ratio has an
//! answer once caches are in use; and every expression of the Grafana dashboard
//! (docs/grafana-dashboard.json, issue 21), its variables set to a catalog and a cache with
//! traffic, answers with data. Prometheus comes from Debian's `prometheus` package, which
//! `scripts/test-deps.sh` installs for promtool.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

struct Prometheus {
    process: Child,
    port: u16,
    agent: ureq::Agent,
}

impl Prometheus {
    /// The answer of `/api/v1/query` to `expr` (Null when there is none).
    fn query(&self, expr: &str) -> serde_json::Value {
        self.agent
            .get(&format!("http://127.0.0.1:{}/api/v1/query", self.port))
            .query("query", expr)
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(serde_json::Value::Null)
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Whether the `prometheus` binary is missing (the test then says SKIPPED).
fn prometheus_missing() -> bool {
    let missing = Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err();
    if missing {
        eprintln!("SKIPPED: no prometheus binary; run scripts/test-deps.sh");
    }
    missing
}

/// A node with catalog `hive_prod` over the fixture warehouse, and a Prometheus scraping it
/// every second.
fn node_and_prometheus() -> (tempfile::TempDir, Server, Prometheus) {
    let (tmp, data) = data_dir();
    let server = Server::start(&data, &[]);
    let warehouse = fixture_warehouse();
    server.query(&format!(
        "CREATE CATALOG hive_prod PROPERTIES ('type'='hms', 'warehouse'='{}', 'meta.cache.max-weight'='1GB')",
        warehouse.display()
    ));
    let target = server.http.trim_start_matches("http://").to_owned();
    let config = tmp.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: metacache\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .expect("config");
    let port = free_port();
    let process = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            tmp.path().join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    (
        tmp,
        server,
        Prometheus {
            process,
            port,
            agent,
        },
    )
}

/// The PromQL of docs/metrics.md: the expressions of its `promql` blocks (separated by
/// comments or blank lines) and the second column of its ratio table.
fn documented_queries() -> Vec<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/metrics.md"),
    )
    .expect("docs/metrics.md");
    let mut queries = Vec::new();
    let mut in_block = false;
    let mut current = String::new();
    let mut in_ratios = false;
    for line in doc.lines() {
        if line.starts_with("```promql") {
            in_block = true;
            continue;
        }
        if in_block {
            let text = line.trim();
            if line.starts_with("```") || text.is_empty() || text.starts_with('#') {
                if !current.trim().is_empty() {
                    queries.push(std::mem::take(&mut current));
                }
                current.clear();
                in_block = !line.starts_with("```");
            } else {
                current.push(' ');
                current.push_str(text);
            }
            continue;
        }
        if line.starts_with("### ") {
            in_ratios = line.contains("PromQL");
        }
        if in_ratios
            && line.starts_with("| ")
            && !line.starts_with("| column")
            && let Some(cell) = line.split(" | ").nth(1)
        {
            let query = cell
                .trim()
                .trim_end_matches('|')
                .trim()
                .trim_matches('`')
                .replace("\\|", "|");
            if !query.is_empty() && !query.starts_with('-') {
                queries.push(query);
            }
        }
    }
    queries
}

#[test]
fn prometheus_evaluates_every_documented_query() {
    if prometheus_missing() {
        return;
    }
    let queries = documented_queries();
    assert!(
        queries.len() >= 8,
        "the doc's queries were found: {queries:?}"
    );
    let (_tmp, server, prometheus) = node_and_prometheus();
    let query = |expr: &str| prometheus.query(expr);
    // Traffic between scrapes until a documented query has an answer (60 s at most).
    let answered = |needle: &str, traffic: &dyn Fn()| {
        let expr = queries_with(&queries, needle);
        let started = Instant::now();
        loop {
            traffic();
            let answer = query(&expr);
            if answer["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty())
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no answer from Prometheus within 60 s to {expr}: {answer}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    };
    answered("metacache_cache_hits_total[5m])) / (", &|| {
        server.query("DESC hive_prod.sales.orders");
    });
    // The load-time histogram answers a p99 once loads were scraped twice.
    answered("histogram_quantile(0.99", &|| {
        server.query("REFRESH CATALOG hive_prod");
        server.query("DESC hive_prod.sales.orders");
    });
    for expr in &queries {
        let answer = query(expr);
        assert_eq!(answer["status"], "success", "{expr}: {answer}");
    }
    drop(prometheus);
}

/// The documented query containing `needle`.
fn queries_with(queries: &[String], needle: &str) -> String {
    queries
        .iter()
        .find(|q| q.contains(needle))
        .cloned()
        .unwrap_or_else(|| panic!("no documented query with {needle:?}"))
}

/// The expressions of docs/grafana-dashboard.json: every panel target and variable query.
fn grafana_expressions() -> Vec<String> {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/grafana-dashboard.json"),
    )
    .expect("docs/grafana-dashboard.json");
    let dashboard: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let mut exprs: Vec<String> = dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["expr"].as_str().map(str::to_owned))
        .collect();
    // label_values(metric{…}, label): the metric selector must have series.
    for variable in dashboard["templating"]["list"]
        .as_array()
        .expect("variables")
    {
        if let Some(query) = variable["query"]["query"].as_str()
            && let Some(inner) = query
                .strip_prefix("label_values(")
                .and_then(|q| q.rsplit_once(','))
                .map(|(selector, _)| selector.to_owned())
        {
            exprs.push(inner);
        }
    }
    exprs
}

#[test]
fn prometheus_answers_every_panel_of_the_grafana_dashboard() {
    if prometheus_missing() {
        return;
    }
    let exprs = grafana_expressions();
    assert!(exprs.len() >= 15, "the dashboard's expressions: {exprs:?}");
    let (_tmp, server, prometheus) = node_and_prometheus();
    let query = |expr: &str| prometheus.query(expr);
    // The variables as an admin would pick them: the catalog, and a cache with traffic.
    let bind = |expr: &str| {
        expr.replace("$catalog", "hive_prod")
            .replace("$entry", "hive-partition")
            .replace("$__rate_interval", "1m")
    };
    let started = Instant::now();
    let mut pending: Vec<String> = exprs.iter().map(|e| bind(e)).collect();
    while !pending.is_empty() {
        // Traffic between scrapes: partitions read again and again, a refresh now and then.
        for _ in 0..5 {
            server.query("SHOW PARTITIONS FROM hive_prod.sales.orders");
            server.query("DESC hive_prod.sales.orders");
        }
        pending.retain(|expr| {
            let answer = query(expr);
            assert_ne!(answer["status"], "error", "{expr}: {answer}");
            // Rejections are absent until the first one (a sparse series): they need only run.
            let answered = answer["data"]["result"]
                .as_array()
                .is_some_and(|r| !r.is_empty());
            !(answered || expr.contains("weight_rejects_total") && answer["status"] == "success")
        });
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no answer within 60 s to {pending:#?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    drop(prometheus);
}
