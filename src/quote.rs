//! Input values quoted in messages: at most [`MAX_QUOTED`] characters, so a 100,000-character
//! string in a settings file or a glTF is named, not echoed whole.

/// The most characters of an input value a message quotes.
pub const MAX_QUOTED: usize = 60;

/// `s` as a message quotes it: its first [`MAX_QUOTED`] characters, then "…" if it was
/// longer; control characters (a newline would break the one-line rule) as `\u{..}` escapes.
pub fn clipped(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == MAX_QUOTED {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A message with every quoted part (between `"` or `` ` `` quotes, as serde, TOML and
/// JSON errors quote values and keys) cut by [`clipped`]; the rest as it is.
pub fn clip_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let q = rest.as_bytes()[open] as char;
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let close = rest.find(q).unwrap_or(rest.len());
        out.push_str(&clipped(&rest[..close]));
        rest = &rest[close..];
        if let Some(c) = rest.strip_prefix(q) {
            out.push(q);
            rest = c;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_cut_and_newlines_escaped() {
        assert_eq!(clipped("short"), "short");
        let long = "é".repeat(100_000);
        let c = clipped(&long);
        assert_eq!(c.chars().count(), MAX_QUOTED + 1);
        assert!(c.ends_with('…'));
        assert_eq!(clipped("a\nb"), "a\\nb");
        let msg = format!(
            "invalid type: string \"{}\", expected `f32`",
            "x".repeat(100_000)
        );
        let c = clip_quoted(&msg);
        assert!(c.len() < 120 && c.ends_with("…\", expected `f32`"), "{c}");
        assert_eq!(clip_quoted("unterminated \"abc"), "unterminated \"abc");
    }
}
