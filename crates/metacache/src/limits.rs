//! Process limits the service needs: every MySQL connection and HTTP request holds a file
//! descriptor, and a soft limit of 1,024 (a common default) would refuse connections long
//! before `mysql_max_connections` (1,024 plus the admin reserve, plus the handshake slots).
//! At start the soft limit on open files is raised to the hard limit.

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the limit now in force, if it
/// could be read.
#[cfg(unix)]
pub fn raise_open_files() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return None;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit; the call only reads it.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit = raised;
        }
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not on every unix
    Some(limit.rlim_cur as u64)
}

/// Nothing to raise on other systems.
#[cfg(not(unix))]
pub fn raise_open_files() -> Option<u64> {
    None
}
