use clap::Parser;
use skelpack::cli::{Cli, run};

fn main() {
    let cli = Cli::parse();
    skelpack::import::set_allow_any_uri(cli.allow_any_uri);
    let code = match cli.command {
        Some(command) => run(command),
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
