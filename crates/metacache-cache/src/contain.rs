//! Containment of a loader that panics: the panic becomes the load's error, so every waiter of
//! the flight gets it at once, it counts as a load failure with its message in `LAST_ERROR`, and
//! the caller's task (a client connection) goes on. Without it the leader's task unwinds, its
//! flight closes without an outcome and the waiters start over one after another, each running
//! the same loader again.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Poll;

/// Bytes of a panic message kept in the error (it ends up in `LAST_ERROR`).
const MESSAGE_LIMIT: usize = 200;

/// A loader panicked.
#[derive(Debug, thiserror::Error)]
#[error("the loader panicked: {message}")]
pub struct LoaderPanicked {
    /// The panic's message, if it had one, cut to 200 bytes.
    pub message: String,
}

impl LoaderPanicked {
    fn new(payload: &(dyn Any + Send)) -> Self {
        let text = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        Self {
            message: text[..text.floor_char_boundary(MESSAGE_LIMIT)].to_owned(),
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs `load`, turning a panic while creating or polling its future into [`LoaderPanicked`].
pub(crate) async fn contained<F, Fut, T, E>(load: F) -> Result<T, BoxError>
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Into<BoxError>,
{
    let future = match catch_unwind(AssertUnwindSafe(load)) {
        Ok(future) => future,
        Err(payload) => return Err(LoaderPanicked::new(&*payload).into()),
    };
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(
        |cx| match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => Poll::Ready(result.map_err(Into::into)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(LoaderPanicked::new(&*payload).into())),
        },
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(future)
    }

    #[test]
    fn a_panic_while_polling_is_an_error_with_its_message() {
        let result: Result<u8, _> = run(contained(|| async {
            tokio::task::yield_now().await;
            panic!("metastore answered {}", 42);
            #[allow(unreachable_code)]
            Ok::<_, std::io::Error>(1)
        }));
        let error = result.expect_err("contained");
        assert_eq!(
            error.to_string(),
            "the loader panicked: metastore answered 42"
        );
    }

    #[test]
    fn a_panic_while_creating_the_future_is_an_error_too() {
        let result: Result<u8, _> = run(contained(
            || -> std::future::Ready<Result<u8, std::io::Error>> { panic!("{}", "é".repeat(150)) },
        ));
        let message = result.expect_err("contained").to_string();
        assert!(message.len() <= "the loader panicked: ".len() + MESSAGE_LIMIT);
        assert!(message.ends_with('é'), "cut on a character boundary");
    }

    #[test]
    fn values_and_errors_pass_through() {
        assert_eq!(
            run(contained(|| async { Ok::<_, std::io::Error>(7) })).expect("value"),
            7
        );
        let error = run(contained(|| async {
            Err::<u8, _>(std::io::Error::other("down"))
        }))
        .expect_err("error");
        assert_eq!(error.to_string(), "down");
    }
}
