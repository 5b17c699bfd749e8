//! The command line: one file per subcommand. `run` returns the process exit code
//! (0 ok, 1 a contract was not met, 2 bad input).

mod cache_args;
mod compress;
mod compress_batch;
mod convert;
mod inspect;
mod make_character;
mod report;
mod report_merge;
mod shard;
mod skp;
mod table;
mod tuning;
#[cfg(feature = "gui")]
mod view;
mod watch;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Error-bounded skeletal animation compression. Without a subcommand, opens the inspector
/// app (on FILE, or on the default character).
#[derive(Parser, Debug)]
#[command(
    name = "skelpack",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A file to open in the app.
    pub file: Option<PathBuf>,
    /// Let glTF buffer URIs name files outside the asset's folder (absolute paths, `..`,
    /// `file:`); by default they are refused. Devices, FIFOs and oversized files stay refused.
    #[arg(long, global = true)]
    pub allow_any_uri: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the skeleton and clips of files (glTF, BVH, ACL SJSON, FBX, or a .skp container).
    Inspect(inspect::Args),
    /// Compress every clip of one file and write a .skp (or a compressed glTF).
    Compress(compress::Args),
    /// Convert a BVH, ACL, glTF, FBX or .skp file into a new glTF scene (skeleton as nodes, clips as
    /// animations).
    Convert(convert::Args),
    /// Regenerate the default character (assets/default_character.glb).
    #[command(hide = true)]
    MakeCharacter(make_character::Args),
    /// Compress every clip of files or folders and print sizes and errors.
    Report(report::Args),
    /// Re-export files every time they (or their sidecars) are saved, until Ctrl-C.
    Watch(watch::Args),
    /// Open FILE in the app, wait for the compressed result, save a screenshot, exit.
    #[cfg(feature = "gui")]
    View(view::Args),
}

impl Command {
    /// Whether the command runs without a window (everything but `view`).
    pub fn is_headless(&self) -> bool {
        #[cfg(feature = "gui")]
        if matches!(self, Self::View(_)) {
            return false;
        }
        true
    }

    /// Whether all of the command's parallel work is started from the main thread, so the
    /// main thread can be one of rayon's workers (see [`join_thread_pool`]). `watch` (work
    /// started from file-watcher threads while the main thread waits) and `view` (the window's
    /// event loop) are not.
    pub fn parallel_work_from_main_thread(&self) -> bool {
        matches!(
            self,
            Self::Inspect(_)
                | Self::Compress(_)
                | Self::Convert(_)
                | Self::MakeCharacter(_)
                | Self::Report(_)
        )
    }
}

/// Makes the calling thread worker 0 of rayon's global pool (`RAYON_NUM_THREADS` or one per
/// core, as before), so a parallel iterator started here runs on this thread and `N - 1`
/// others instead of handing every job to `N` spawned threads while this one sleeps. With one
/// thread nothing is spawned and nothing is handed over: a one-frame clip's compression was
/// dominated by that hand-over (28 context switches, one thread start). Call it first, before
/// anything uses rayon; it does nothing if the pool already exists.
pub fn join_thread_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .use_current_thread()
        .build_global();
}

/// Runs a subcommand; returns the exit code.
pub fn run(command: Command) -> i32 {
    let result = match command {
        Command::Inspect(a) => inspect::run(a),
        Command::Compress(a) => compress::run(a),
        Command::Convert(a) => convert::run(a),
        Command::MakeCharacter(a) => make_character::run(a),
        Command::Report(a) => report::run(a),
        Command::Watch(a) => watch::run(a),
        #[cfg(feature = "gui")]
        Command::View(a) => view::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}
