//! Scan scopes (§8.2): an engine opens a scope for one scan; every task that presents the scope
//! asks it for a table's resolution (location and storage options, vended credentials
//! included) and shares what the first task fetched; other scopes never see it. Credentials are
//! refreshed before they expire ([`window`]); nothing below the life a caller asks for is handed
//! out.
//!
//! # What lives where
//! - [`Scopes`]: the node's registry — open, find, close, list, sweep idle scopes; bounds on the
//!   number of scopes and of entries per scope (node keys, changeable at runtime); node-wide
//!   counters.
//! - [`Scope`]: one scope — its catalog, label, idle timeout, refresh window, entries, leases.
//! - `entry`: one table of a scope and its refresh rules.
//! - [`ScopedAccess`]: what a caller holds — the handout and a lease that keeps the entry (and the
//!   scope) from being closed or expiring while held.
//!
//! # Invariants
//! - Entries of a scope are reachable only through that scope; nothing here enters the node-wide
//!   caches (vended credentials never do, §8.1).
//! - A scope with a lease held does not expire; a closed scope takes no new access, and the
//!   entries its leases hold stay alive until the leases are dropped.
//! - Every entry's bytes are charged to the catalog's budget ([`metacache_ledger::Budget`]), so
//!   scopes compete for memory with the catalog's caches and never take the node past its limit.
//! - Credentials appear only in [`Handout`]s: `Debug` of a [`Resolution`] and every error and
//!   row here show option names, never values.

mod entry;
pub mod window;

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use metacache_ledger::Budget;
use parking_lot::Mutex;

pub use entry::Handout;
pub use window::RefreshWindow;

use crate::Clock;
use crate::refresh::RefreshError;
use window::millis;

/// The idle timeout of a scope that does not ask for one.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest idle timeout a scope may ask for.
pub const MAX_IDLE_TIMEOUT: Duration = Duration::from_secs(24 * 3600);
/// The shortest idle timeout a scope may ask for.
pub const MIN_IDLE_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest label.
pub const MAX_LABEL_CHARS: usize = 256;
/// Default bound on open scopes per node (`external_meta_cache_scope_max_count`).
pub const DEFAULT_MAX_SCOPES: usize = 1024;
/// Default bound on tables per scope (`external_meta_cache_scope_max_entries`).
pub const DEFAULT_MAX_ENTRIES: usize = 1024;

/// A table of a scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeKey {
    /// Database (namespace).
    pub database: String,
    /// Table.
    pub table: String,
}

impl ScopeKey {
    /// The key of `database.table`.
    pub fn new(database: &str, table: &str) -> Self {
        Self {
            database: database.to_owned(),
            table: table.to_owned(),
        }
    }
}

impl std::fmt::Display for ScopeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.database, self.table)
    }
}

/// A table's resolution as a source answers it for a scope.
#[derive(Clone, PartialEq, Eq)]
pub struct Resolution {
    /// Where the table is (a URI or an absolute path).
    pub location: String,
    /// The metadata file the scope reads (Iceberg), kept for the scope's life.
    pub metadata_location: Option<String>,
    /// Options to open the table's files with; with `vended`, they carry credentials.
    pub storage_options: BTreeMap<String, String>,
    /// Whether the source vended `storage_options` (credentials) for this request.
    pub vended: bool,
    /// When the vended credentials expire (Unix ms), as the source said; `None` when it did not.
    pub expires_at_millis: Option<u64>,
}

impl Resolution {
    /// Whether it carries credentials that expire.
    pub fn has_credentials(&self) -> bool {
        self.vended && !self.storage_options.is_empty()
    }

    /// What it is charged: its strings and a fixed overhead per option and value.
    fn charge(&self) -> u64 {
        let strings = self.location.len()
            + self.metadata_location.as_ref().map_or(0, String::len)
            + self
                .storage_options
                .iter()
                .map(|(k, v)| k.len() + v.len() + 64)
                .sum::<usize>();
        u64::try_from(strings)
            .unwrap_or(u64::MAX)
            .saturating_add(512)
    }
}

/// Option names only: values may be credentials.
impl std::fmt::Debug for Resolution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolution")
            .field("location", &crate::redact::redact(&self.location))
            .field("metadata_location", &self.metadata_location)
            .field("storage_options", &self.storage_options.keys())
            .field("vended", &self.vended)
            .field("expires_at_millis", &self.expires_at_millis)
            .finish()
    }
}

/// A resolution on its way from the source.
pub type ResolveFuture = Pin<Box<dyn Future<Output = Result<Resolution, RefreshError>> + Send>>;

/// How a scope asks its source for a table: the key and the resolution it holds (a source may
/// renew only the credentials of it and keep its location and metadata file).
pub type Resolver = Arc<dyn Fn(ScopeKey, Option<Arc<Resolution>>) -> ResolveFuture + Send + Sync>;

/// Builds a [`Resolver`] from an async closure.
pub fn resolver<F, Fut>(f: F) -> Resolver
where
    F: Fn(ScopeKey, Option<Arc<Resolution>>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Resolution, RefreshError>> + Send + 'static,
{
    Arc::new(move |key, previous| Box::pin(f(key, previous)))
}

/// A failed resolution as callers and rows see it: the source's message with secrets masked.
#[derive(Clone)]
pub struct SourceFailure {
    message: Arc<str>,
    /// The source's error, for a front end that maps kinds (not found, unavailable) to replies.
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl SourceFailure {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: Arc::from(message.into()),
            source: None,
        }
    }

    fn from_error(error: RefreshError) -> Self {
        Self {
            message: Arc::from(crate::redact::redact(&error.to_string()).into_owned()),
            source: Some(Arc::from(error)),
        }
    }

    /// Masks the values of the secret options of `options` wherever they appear.
    fn scrub(&mut self, options: &BTreeMap<String, String>) {
        let mut message = self.message.to_string();
        for (key, value) in options {
            if value.len() >= 4 && crate::redact::is_secret_name(key) {
                message = message.replace(value.as_str(), crate::redact::MASK);
            }
        }
        if *message != *self.message {
            self.message = Arc::from(message);
        }
    }

    /// The message (secrets masked).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Debug for SourceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::fmt::Display for SourceFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Why a scope operation failed.
#[derive(Debug, thiserror::Error, Clone)]
pub enum ScopeError {
    /// No open scope has that id (never opened, closed, or expired).
    #[error("no open scope has that id (it was closed, expired, or never opened)")]
    NotFound,
    /// The node holds `limit` scopes already.
    #[error(
        "the node holds {limit} open scopes, its limit (external_meta_cache_scope_max_count); close or let idle ones expire"
    )]
    TooManyScopes {
        /// `external_meta_cache_scope_max_count`.
        limit: usize,
    },
    /// Every entry of the scope is leased and the scope is full.
    #[error(
        "the scope holds {limit} tables, its limit (external_meta_cache_scope_max_entries), all of them in use"
    )]
    TooManyEntries {
        /// `external_meta_cache_scope_max_entries`.
        limit: usize,
    },
    /// A scope option is out of range.
    #[error("invalid scope option '{option}': {expected}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// What it takes.
        expected: &'static str,
    },
    /// The source failed and no usable value is held; nothing is retried before `retry_at_millis`.
    #[error(
        "the source could not resolve the table: {failure}; next attempt at {retry_at_millis} (Unix ms)"
    )]
    Source {
        /// What the source said (secrets masked).
        failure: SourceFailure,
        /// When the entry's next attempt may start.
        retry_at_millis: u64,
    },
    /// The caller asks for more remaining life than this source's credentials have.
    #[error(
        "the source's credentials for this table live {lifetime_ms} ms, less than min_remaining_ms = {min_remaining_ms}"
    )]
    LifetimeTooShort {
        /// What the caller asked for.
        min_remaining_ms: u64,
        /// The lifetime of the last credentials vended.
        lifetime_ms: u64,
    },
    /// A refresh did not end within the wait bound.
    #[error("the table's refresh did not finish within {waited_ms} ms")]
    WaitTimedOut {
        /// The wait bound (`external_meta_cache_lease_timeout_ms`).
        waited_ms: u64,
    },
    /// After one refresh ended, another one started before this caller could use the first.
    #[error("the table's credentials are being refreshed again; retry")]
    StillRefreshing,
}

impl ScopeError {
    /// The source's error behind [`ScopeError::Source`], for mapping its kind.
    pub fn source_error(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match self {
            ScopeError::Source { failure, .. } => failure.source.as_deref(),
            _ => None,
        }
    }
}

/// Counters of one scope, or of the node.
#[derive(Debug, Default)]
pub struct Counters {
    /// Accesses asked.
    pub accesses: AtomicU64,
    /// Calls to the source (first resolutions and refreshes, failed ones included).
    pub resolutions: AtomicU64,
    /// Successful refreshes that replaced a held resolution.
    pub refreshes: AtomicU64,
    /// Failed calls to the source.
    pub failures: AtomicU64,
    /// Times a caller waited for a refresh.
    pub waits: AtomicU64,
    /// Accesses answered with an error (nothing usable could be handed out).
    pub refused: AtomicU64,
}

/// What an entry's refresh needs from its scope.
pub(crate) struct Shared {
    clock: Clock,
    resolver: Resolver,
    window: RefreshWindow,
    scope: Arc<Counters>,
    node: Arc<Counters>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

impl Shared {
    fn count(&self, counter: impl Fn(&Counters) -> &AtomicU64) {
        counter(&self.scope).fetch_add(1, Relaxed);
        counter(&self.node).fetch_add(1, Relaxed);
    }
}

/// How a scope is opened.
pub struct ScopeOptions {
    /// The catalog.
    pub catalog: String,
    /// A free-form label (a query id, a job name), shown in `catalog_meta_cache_scopes`.
    pub label: String,
    /// How long the scope lives without use (`None`: [`DEFAULT_IDLE_TIMEOUT`]).
    pub idle_timeout: Option<Duration>,
    /// When credentials are refreshed (the catalog's setting).
    pub window: RefreshWindow,
    /// The budget entries are charged to (the catalog's).
    pub budget: Arc<Budget>,
    /// How tables are resolved.
    pub resolver: Resolver,
}

/// One open scope.
#[derive(Debug)]
pub struct Scope {
    id: String,
    catalog: String,
    label: String,
    idle_timeout_ms: u64,
    created_ms: u64,
    last_used_ms: AtomicU64,
    leases: AtomicUsize,
    closed: AtomicBool,
    entries: Mutex<HashMap<ScopeKey, Arc<entry::Entry>>>,
    shared: Arc<Shared>,
    budget: Arc<Budget>,
    /// The node's bounds and wait, shared with the registry (changed live).
    limits: Arc<Limits>,
}

/// One caller's hold on a table of a scope: the handout, and a lease that keeps the scope from
/// expiring and the entry from being evicted or closed until dropped.
#[derive(Debug)]
pub struct ScopedAccess {
    /// What the caller gets.
    pub handout: Handout,
    /// When the scope expires if it is not used again after this lease ends (Unix ms).
    pub scope_expires_at_millis: u64,
    _lease: Lease,
}

#[derive(Debug)]
struct Lease {
    scope: Arc<Scope>,
    entry: Arc<entry::Entry>,
}

impl Drop for Lease {
    fn drop(&mut self) {
        let now = self.scope.shared.clock.wall_millis();
        self.entry.last_used_ms.store(now, Relaxed);
        self.entry.leases.fetch_sub(1, Relaxed);
        self.scope.last_used_ms.fetch_max(now, Relaxed);
        self.scope.leases.fetch_sub(1, Relaxed);
    }
}

impl Scope {
    /// The scope's id (what tasks present).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The catalog it resolves tables of.
    pub fn catalog(&self) -> &str {
        &self.catalog
    }

    /// When it expires if unused from now on (Unix ms).
    pub fn expires_at_millis(&self) -> u64 {
        self.last_used_ms
            .load(Relaxed)
            .saturating_add(self.idle_timeout_ms)
    }

    fn idle_at(&self, now_ms: u64) -> bool {
        self.leases.load(Relaxed) == 0 && now_ms >= self.expires_at_millis()
    }

    /// The resolution of `database.table` for a caller that needs `min_remaining` of credential
    /// life (zero: anything not expired), shared with every other caller of this scope.
    pub async fn access(
        self: &Arc<Self>,
        database: &str,
        table: &str,
        min_remaining: Duration,
    ) -> Result<ScopedAccess, ScopeError> {
        if self.closed.load(Relaxed) {
            return Err(ScopeError::NotFound);
        }
        self.shared.count(|c| &c.accesses);
        let now = self.shared.clock.wall_millis();
        // Lease first: from here the scope is in use and cannot expire under the caller.
        self.leases.fetch_add(1, Relaxed);
        self.last_used_ms.fetch_max(now, Relaxed);
        let entry = match self.entry(ScopeKey::new(database, table), now) {
            Ok(entry) => entry,
            Err(e) => {
                self.leases.fetch_sub(1, Relaxed);
                return Err(e);
            }
        };
        let lease = Lease {
            scope: Arc::clone(self),
            entry: Arc::clone(&entry),
        };
        let wait = Duration::from_millis(self.limits.wait_ms.load(Relaxed));
        let handout = entry.get(&self.shared, millis(min_remaining), wait).await?;
        Ok(ScopedAccess {
            handout,
            scope_expires_at_millis: self.expires_at_millis(),
            _lease: lease,
        })
    }

    /// The entry of `key`, leased; a new one may evict the least recently used unleased entry.
    fn entry(&self, key: ScopeKey, now: u64) -> Result<Arc<entry::Entry>, ScopeError> {
        let mut entries = self.entries.lock();
        if let Some(entry) = entries.get(&key) {
            entry.leases.fetch_add(1, Relaxed);
            entry.last_used_ms.store(now, Relaxed);
            return Ok(Arc::clone(entry));
        }
        let limit = self.limits.max_entries.load(Relaxed).max(1);
        while entries.len() >= limit {
            let coldest = entries
                .values()
                .filter(|e| e.leases.load(Relaxed) == 0)
                .min_by_key(|e| e.last_used_ms.load(Relaxed))
                .map(|e| e.key.clone());
            match coldest {
                Some(key) => {
                    entries.remove(&key);
                }
                None => return Err(ScopeError::TooManyEntries { limit }),
            }
        }
        let entry = Arc::new(entry::Entry::new(
            key.clone(),
            Arc::clone(&self.budget),
            now,
        ));
        entry.leases.fetch_add(1, Relaxed);
        entries.insert(key, Arc::clone(&entry));
        Ok(entry)
    }

    /// What `catalog_meta_cache_scopes` shows of it.
    pub fn info(&self) -> ScopeInfo {
        let entries = self.entries.lock();
        ScopeInfo {
            scope_id: self.id.clone(),
            catalog: self.catalog.clone(),
            label: self.label.clone(),
            entries: entries.len(),
            leases: self.leases.load(Relaxed),
            earliest_expiry_millis: entries.values().filter_map(|e| e.expiry_ms()).min(),
            bytes: entries.values().map(|e| e.charged()).sum(),
            accesses: self.shared.scope.accesses.load(Relaxed),
            resolutions: self.shared.scope.resolutions.load(Relaxed),
            refreshes: self.shared.scope.refreshes.load(Relaxed),
            refresh_failures: self.shared.scope.failures.load(Relaxed),
            refused: self.shared.scope.refused.load(Relaxed),
            created_millis: self.created_ms,
            last_used_millis: self.last_used_ms.load(Relaxed),
            expires_at_millis: self.expires_at_millis(),
            idle_timeout_ms: self.idle_timeout_ms,
        }
    }
}

/// A row of `catalog_meta_cache_scopes` (no credentials: counts and times only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeInfo {
    /// The scope's id.
    pub scope_id: String,
    /// Its catalog.
    pub catalog: String,
    /// Its label.
    pub label: String,
    /// Tables it holds.
    pub entries: usize,
    /// Leases held now.
    pub leases: usize,
    /// The earliest credential expiry among its tables (vended or assumed), Unix ms.
    pub earliest_expiry_millis: Option<u64>,
    /// Bytes charged for its tables.
    pub bytes: u64,
    /// Accesses asked.
    pub accesses: u64,
    /// Calls to the source.
    pub resolutions: u64,
    /// Successful refreshes.
    pub refreshes: u64,
    /// Failed calls to the source.
    pub refresh_failures: u64,
    /// Accesses refused.
    pub refused: u64,
    /// When it was opened, Unix ms.
    pub created_millis: u64,
    /// When it was last used, Unix ms.
    pub last_used_millis: u64,
    /// When it expires if unused from now on, Unix ms.
    pub expires_at_millis: u64,
    /// Its idle timeout.
    pub idle_timeout_ms: u64,
}

/// The node-wide bounds, changeable at runtime.
#[derive(Debug)]
struct Limits {
    max_scopes: AtomicUsize,
    max_entries: AtomicUsize,
    /// How long a caller waits for a running refresh.
    wait_ms: AtomicU64,
}

/// The node's scopes.
#[derive(Debug)]
pub struct Scopes {
    clock: Clock,
    scopes: Mutex<HashMap<String, Arc<Scope>>>,
    limits: Arc<Limits>,
    node: Arc<Counters>,
    opened: AtomicU64,
    closed: AtomicU64,
    expired: AtomicU64,
}

impl Scopes {
    /// An empty registry on `clock`, with the default bounds.
    pub fn new(clock: Clock) -> Self {
        Self {
            clock,
            scopes: Mutex::new(HashMap::new()),
            limits: Arc::new(Limits {
                max_scopes: AtomicUsize::new(DEFAULT_MAX_SCOPES),
                max_entries: AtomicUsize::new(DEFAULT_MAX_ENTRIES),
                wait_ms: AtomicU64::new(millis(crate::DEFAULT_LEASE_TIMEOUT)),
            }),
            node: Arc::new(Counters::default()),
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            expired: AtomicU64::new(0),
        }
    }

    /// Sets the bounds: open scopes, tables per scope, and how long a caller waits for a
    /// running refresh. Lower bounds apply to new scopes and new tables.
    pub fn set_limits(&self, max_scopes: usize, max_entries: usize, wait: Duration) {
        self.limits.max_scopes.store(max_scopes, Relaxed);
        self.limits.max_entries.store(max_entries, Relaxed);
        self.limits.wait_ms.store(millis(wait), Relaxed);
    }

    /// `(max_scopes, max_entries)` as set now.
    pub fn limits(&self) -> (usize, usize) {
        (
            self.limits.max_scopes.load(Relaxed),
            self.limits.max_entries.load(Relaxed),
        )
    }

    /// Opens a scope. Expired scopes are swept first, so a full node makes room when it can.
    pub fn open(&self, options: ScopeOptions) -> Result<Arc<Scope>, ScopeError> {
        let idle = options.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT);
        if !(MIN_IDLE_TIMEOUT..=MAX_IDLE_TIMEOUT).contains(&idle) {
            return Err(ScopeError::InvalidOption {
                option: "idle_timeout_ms",
                expected: "milliseconds, 1000 to 86400000",
            });
        }
        if options.label.chars().count() > MAX_LABEL_CHARS
            || options.label.chars().any(char::is_control)
        {
            return Err(ScopeError::InvalidOption {
                option: "label",
                expected: "at most 256 characters, no control characters",
            });
        }
        self.sweep();
        let now = self.clock.wall_millis();
        let mut scopes = self.scopes.lock();
        let limit = self.limits.max_scopes.load(Relaxed);
        if scopes.len() >= limit {
            return Err(ScopeError::TooManyScopes { limit });
        }
        let id = loop {
            let id = format!("{:032x}", rand::random::<u128>());
            if !scopes.contains_key(&id) {
                break id;
            }
        };
        let scope = Arc::new(Scope {
            id: id.clone(),
            catalog: options.catalog,
            label: options.label,
            idle_timeout_ms: millis(idle),
            created_ms: now,
            last_used_ms: AtomicU64::new(now),
            leases: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
            entries: Mutex::new(HashMap::new()),
            shared: Arc::new(Shared {
                clock: self.clock.clone(),
                resolver: options.resolver,
                window: options.window,
                scope: Arc::new(Counters::default()),
                node: Arc::clone(&self.node),
            }),
            budget: options.budget,
            limits: Arc::clone(&self.limits),
        });
        scopes.insert(id, Arc::clone(&scope));
        self.opened.fetch_add(1, Relaxed);
        Ok(scope)
    }

    /// The open scope `id` (an idle one that has expired is gone).
    pub fn get(&self, id: &str) -> Result<Arc<Scope>, ScopeError> {
        let now = self.clock.wall_millis();
        let mut scopes = self.scopes.lock();
        let scope = scopes.get(id).cloned().ok_or(ScopeError::NotFound)?;
        if scope.idle_at(now) {
            scopes.remove(id);
            self.retire(&scope, &self.expired);
            return Err(ScopeError::NotFound);
        }
        // Counts as use: a task about to ask keeps the scope alive.
        scope.last_used_ms.fetch_max(now, Relaxed);
        Ok(scope)
    }

    /// Closes scope `id`: it takes no new access; tables leased now stay with their holders
    /// until they let go.
    pub fn close(&self, id: &str) -> Result<ScopeInfo, ScopeError> {
        let scope = self.scopes.lock().remove(id).ok_or(ScopeError::NotFound)?;
        let info = scope.info();
        self.retire(&scope, &self.closed);
        Ok(info)
    }

    /// Closes every scope of `catalog` (the catalog was dropped); returns how many.
    pub fn close_catalog(&self, catalog: &str) -> usize {
        let gone: Vec<Arc<Scope>> = {
            let mut scopes = self.scopes.lock();
            let ids: Vec<String> = scopes
                .values()
                .filter(|s| s.catalog == catalog)
                .map(|s| s.id.clone())
                .collect();
            ids.iter().filter_map(|id| scopes.remove(id)).collect()
        };
        for scope in &gone {
            self.retire(scope, &self.closed);
        }
        gone.len()
    }

    fn retire(&self, scope: &Scope, counter: &AtomicU64) {
        scope.closed.store(true, Relaxed);
        // Unleased entries go now; leased ones live on in their leases.
        scope.entries.lock().clear();
        counter.fetch_add(1, Relaxed);
    }

    /// Removes scopes idle past their timeout with no lease held; returns how many.
    pub fn sweep(&self) -> usize {
        let now = self.clock.wall_millis();
        let gone: Vec<Arc<Scope>> = {
            let mut scopes = self.scopes.lock();
            let ids: Vec<String> = scopes
                .values()
                .filter(|s| s.idle_at(now))
                .map(|s| s.id.clone())
                .collect();
            ids.iter().filter_map(|id| scopes.remove(id)).collect()
        };
        for scope in &gone {
            self.retire(scope, &self.expired);
        }
        gone.len()
    }

    /// Every open scope, oldest first.
    pub fn list(&self) -> Vec<ScopeInfo> {
        self.sweep();
        let scopes: Vec<Arc<Scope>> = self.scopes.lock().values().cloned().collect();
        let mut rows: Vec<ScopeInfo> = scopes.iter().map(|s| s.info()).collect();
        rows.sort_by(|a, b| (a.created_millis, &a.scope_id).cmp(&(b.created_millis, &b.scope_id)));
        rows
    }

    /// Node-wide totals, for `/metrics`.
    pub fn stats(&self) -> ScopesStats {
        let open = self.scopes.lock().len();
        ScopesStats {
            open,
            opened: self.opened.load(Relaxed),
            closed: self.closed.load(Relaxed),
            expired: self.expired.load(Relaxed),
            accesses: self.node.accesses.load(Relaxed),
            resolutions: self.node.resolutions.load(Relaxed),
            refreshes: self.node.refreshes.load(Relaxed),
            failures: self.node.failures.load(Relaxed),
            waits: self.node.waits.load(Relaxed),
            refused: self.node.refused.load(Relaxed),
        }
    }
}

/// Node-wide scope totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScopesStats {
    /// Scopes open now.
    pub open: usize,
    /// Scopes opened since start.
    pub opened: u64,
    /// Scopes closed by their callers (or with their catalog).
    pub closed: u64,
    /// Scopes that expired idle.
    pub expired: u64,
    /// Accesses asked.
    pub accesses: u64,
    /// Calls to sources.
    pub resolutions: u64,
    /// Successful refreshes.
    pub refreshes: u64,
    /// Failed calls to sources.
    pub failures: u64,
    /// Callers that waited for a refresh.
    pub waits: u64,
    /// Accesses refused.
    pub refused: u64,
}
