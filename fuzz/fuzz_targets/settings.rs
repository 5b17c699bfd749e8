//! Settings text (TOML, or JSON when it starts with `{`): parsed and validated, or one
//! error, never a panic; what parses also serializes back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skelpack::settings::Settings;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["input.skelpack.toml", "input.skelpack.json"] {
        let path = std::path::Path::new(name);
        if let Ok(s) = Settings::parse(text, path) {
            let _ = s.to_text(path);
        }
    }
});
