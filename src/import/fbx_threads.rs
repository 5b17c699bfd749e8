//! ufbx's thread pool on rayon's. While ufbx reads a binary FBX file's objects, it hands each
//! deflated array (curves, vertices, weights) to a task and goes on parsing; the tasks inflate
//! the arrays on rayon's worker threads. ufbx starts tasks in batches, one of its four task
//! groups at a time (`run`), and waits for a group before reusing it (`wait`); see
//! `ufbx_thread_pool` in ufbx.h.
//!
//! A wait never blocks a rayon worker on tasks queued behind it: a worker that waits runs
//! pending rayon jobs itself (its own tasks first) and only sleeps once every task of the
//! group is taken by another thread, which wakes it when done.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// ufbx's task groups (`UFBX_THREAD_GROUP_COUNT` in ufbx.h).
const GROUPS: usize = 4;

/// Unfinished tasks per task group of one load.
pub(super) struct TaskPool {
    pending: [AtomicUsize; GROUPS],
    lock: Mutex<()>,
    finished: Condvar,
}

impl TaskPool {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            pending: Default::default(),
            lock: Mutex::new(()),
            finished: Condvar::new(),
        })
    }

    /// The pool as ufbx's load option. `pool` must stay alive until the load returns (ufbx
    /// waits for every task before it returns, and each running task holds its own
    /// reference, so nothing touches the pool after that).
    pub fn for_load(pool: &Arc<Self>) -> ufbx::ThreadOpts {
        let raw = ufbx::RawThreadPool {
            init_fn: None,
            run_fn: Some(run),
            wait_fn: Some(wait),
            free_fn: None,
            user: Arc::as_ptr(pool) as *mut c_void,
        };
        ufbx::ThreadOpts {
            // SAFETY: `run` and `wait` follow ufbx's contract (every index of a batch run
            // once, a group's wait returns after its tasks), and `user` is a live `TaskPool`
            // for the whole load (the caller's `Arc`).
            pool: ufbx::ThreadPool::Raw(unsafe { ufbx::Unsafe::new(raw) }),
            ..Default::default()
        }
    }

    fn task_done(&self, group: usize) {
        if self.pending[group].fetch_sub(1, Ordering::AcqRel) == 1 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.finished.notify_all();
        }
    }
}

/// A context handle ufbx gives to `run` (its internal pool), sent to the task's thread.
#[derive(Clone, Copy)]
struct Context(ufbx::ThreadPoolContext);

/// ufbx's `run_fn`: starts tasks `start .. start + count` of `group` on rayon's pool.
unsafe extern "C" fn run(user: *mut c_void, ctx: usize, group: u32, start: u32, count: u32) {
    let group = group as usize % GROUPS;
    // SAFETY: `user` is the `Arc<TaskPool>` pointer `for_load` gave ufbx, alive for the load;
    // each task takes its own strong reference.
    let pool = unsafe {
        Arc::increment_strong_count(user as *const TaskPool);
        Arc::from_raw(user as *const TaskPool)
    };
    pool.pending[group].fetch_add(count as usize, Ordering::AcqRel);
    let ctx = Context(ctx);
    for index in start..start.saturating_add(count) {
        let pool = Arc::clone(&pool);
        rayon::spawn(move || {
            let ctx = ctx;
            // SAFETY: `ctx` and `index` are what ufbx passed to `run`; ufbx keeps its
            // context alive until `wait` has returned for this group.
            unsafe { ufbx::thread_pool_run_task(ctx.0, index) };
            pool.task_done(group);
        });
    }
}

/// ufbx's `wait_fn`: returns once every task started in `group` has finished.
unsafe extern "C" fn wait(user: *mut c_void, _ctx: usize, group: u32, _max_index: u32) {
    let group = group as usize % GROUPS;
    // SAFETY: as in `run`; borrowed for this call only.
    let pool = unsafe { &*(user as *const TaskPool) };
    while pool.pending[group].load(Ordering::Acquire) > 0 {
        // On a rayon worker: run pending jobs (this group's among them) rather than block.
        if let Some(rayon::Yield::Executed) = rayon::yield_now() {
            continue;
        }
        let guard = pool.lock.lock().unwrap_or_else(|e| e.into_inner());
        if pool.pending[group].load(Ordering::Acquire) > 0 {
            // Every task is taken by another thread; the last one to finish wakes us (the
            // timeout only bounds a worker's sleep should new jobs be queued meanwhile).
            let _ = pool
                .finished
                .wait_timeout(guard, std::time::Duration::from_millis(1));
        }
    }
}
