//! The store connections the handlers share: a few open ones, a bound on
//! how many at once, each used on the blocking pool.

use std::sync::Arc;

use latlab_history::{History, HistoryError};

use super::App;

/// Runs `f` on a pooled store connection, on the blocking pool (the
/// store's clients are synchronous). A connection that failed is dropped,
/// so a restarted PostgreSQL is reconnected to on the next request.
pub(super) async fn with_db<T, F>(app: &Arc<App>, f: F) -> Result<T, HistoryError>
where
    T: Send + 'static,
    F: FnOnce(&mut History) -> Result<T, HistoryError> + Send + 'static,
{
    let _permit = app
        .permits
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let app = Arc::clone(app);
    tokio::task::spawn_blocking(move || {
        let pooled = app.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut history = match pooled {
            Some(h) => h,
            None => History::open_location(&app.location)?,
        };
        let outcome = f(&mut history);
        if outcome.is_ok() {
            app.idle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(history);
        }
        outcome
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}
