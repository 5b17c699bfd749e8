use clap::Parser;
use skelpack::cli::{Cli, run};

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Some(command) => run(command),
        None => {
            eprintln!("the inspector app is not built yet; try `skelpack inspect FILE`");
            2
        }
    };
    std::process::exit(code);
}
