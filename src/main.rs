use clap::Parser;
use skelpack::cli::{Cli, run};

fn main() {
    let cli = Cli::parse();
    skelpack::import::set_allow_any_uri(cli.allow_any_uri);
    let code = match cli.command {
        Some(command) => {
            if command.is_headless() {
                quiet_on_closed_stdout();
                skelpack::fsutil::remove_temps_on_signal();
            }
            if command.parallel_work_from_main_thread() {
                skelpack::cli::join_thread_pool();
            }
            run(command)
        }
        #[cfg(feature = "gui")]
        None => skelpack::app::run(cli.file),
        #[cfg(not(feature = "gui"))]
        None => {
            eprintln!("built without the app (feature `gui`); try `skelpack inspect FILE`");
            2
        }
    };
    std::process::exit(code);
}

/// A reader that stops early (`skelpack report DIR | head`) ends the command the way it
/// ends any Unix filter — by SIGPIPE, quietly — instead of a panic in `println!`.
fn quiet_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: restores the default disposition of SIGPIPE before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
