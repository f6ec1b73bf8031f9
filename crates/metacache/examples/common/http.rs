//! The HTTP client the examples that drive a running metacache share (`ureq`, blocking): an
//! agent that answers every status, a request that may carry a look-aside lease, and a call
//! that must succeed.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::Value as Json;

/// An agent that answers every status (the caller judges it) and gives up after `timeout`.
pub fn new_agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// Status, `Metacache-Lease` header (if any) and body of one request (as text, lossily); a
/// `PUT` carries `lease` if given.
pub fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: &[u8],
    lease: Option<&str>,
) -> Result<(u16, Option<String>, String)> {
    let response = match method {
        "GET" => agent.get(url).call(),
        "POST" => agent.post(url).send(body),
        "PUT" => {
            let mut put = agent.put(url);
            if let Some(lease) = lease {
                put = put.header("Metacache-Lease", lease);
            }
            put.send(body)
        }
        other => bail!("method {other}"),
    };
    let mut response = response.with_context(|| format!("{method} {url}"))?;
    let status = response.status().as_u16();
    let lease = response
        .headers()
        .get("metacache-lease")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // A look-aside hit's body is the value's bytes, not text.
    let body = response.body_mut().read_to_vec()?;
    let text = String::from_utf8_lossy(&body).into_owned();
    Ok((status, lease, text))
}

/// Registers look-aside engine `engine` on the node at `base`: catalogs of type `engine` get
/// one cache, `entry_name`, configured by `meta.cache.<engine>.blobs.*` (values live a day;
/// the count capacity never binds, so bytes do).
pub fn define_blob_engine(
    agent: &ureq::Agent,
    base: &str,
    engine: &str,
    entry_name: &str,
) -> Result<()> {
    let definition = format!(
        r#"{{"catalog_types": ["{engine}"],
            "entries": [{{"token": "blobs", "defaults": {{"enable": true, "ttl": {{"seconds": 86400}}, "capacity": 10000000}}}}],
            "caches": [{{"entry_name": "{entry_name}", "source": {{"entry": "blobs"}}}}]}}"#
    );
    call(
        agent,
        "PUT",
        &format!("{base}/api/v1/engines/{engine}"),
        definition.as_bytes(),
    )?;
    Ok(())
}

/// A request that must succeed (a status below 300), answering its JSON (or its text as a
/// JSON string).
pub fn call(agent: &ureq::Agent, method: &str, url: &str, body: &[u8]) -> Result<Json> {
    let (status, _, text) = send(agent, method, url, body, None)?;
    if status >= 300 {
        bail!("{method} {url}: {status} {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Json::String(text)))
}
