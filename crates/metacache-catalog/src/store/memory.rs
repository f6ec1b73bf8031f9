//! A store that forgets everything when the process ends: for embedding metacache as a
//! library with catalogs defined in code, and for tests of the lifecycle alone.

use parking_lot::Mutex;

use super::{CatalogStore, Change, StoredState};
use crate::StoreError;

/// Keeps the state in memory only.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<StoredState>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl CatalogStore for MemoryStore {
    fn load(&self) -> Result<StoredState, StoreError> {
        Ok(self.state.lock().clone())
    }

    fn commit(&self, change: &Change) -> Result<(), StoreError> {
        self.state.lock().apply(change);
        Ok(())
    }

    fn describe(&self) -> String {
        "memory (not durable)".to_owned()
    }
}
