//! `skelpack make-character OUT.glb` (hidden): regenerates the default character that is
//! committed as `assets/default_character.glb`.

use std::path::PathBuf;

use crate::character;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to write the character (normally assets/default_character.glb).
    pub output: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let bytes = character::generate_glb()?;
    crate::export::write_output(&args.output, &bytes, None, true)?;
    println!("wrote {} ({} bytes)", args.output.display(), bytes.len());
    Ok(0)
}
