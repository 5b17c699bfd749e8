//! A path typed in the app, for when no native file dialog can open (no desktop portal, no
//! zenity: a bare X server, a remote session) or when typing is faster: a text field with
//! completion from the file system.

use std::path::{Path, PathBuf};

use egui::{Key, RichText};

/// The field's accessible name and buttons (tests find them by these).
pub const FIELD: &str = "Path";
pub const OK: &str = "OK";
pub const CANCEL: &str = "Cancel";

/// What the typed path is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    Open,
    ExportGltf,
    ExportSkp,
    SaveSettings,
}

impl Purpose {
    pub fn title(self) -> &'static str {
        match self {
            Self::Open => "Open file",
            Self::ExportGltf => "Export compressed glTF",
            Self::ExportSkp => "Export .skp",
            Self::SaveSettings => "Save settings as",
        }
    }

    /// Opening needs an existing file; the others write one.
    fn must_exist(self) -> bool {
        self == Self::Open
    }
}

/// The open prompt: its purpose, the text typed so far, and why it was shown.
#[derive(Clone, Debug)]
pub struct PathPrompt {
    pub purpose: Purpose,
    pub text: String,
    pub reason: Option<String>,
}

/// What the user did with the prompt.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Chosen(PathBuf),
    Cancelled,
}

impl PathPrompt {
    pub fn new(purpose: Purpose, start: &Path, reason: Option<String>) -> Self {
        Self {
            purpose,
            text: start.display().to_string(),
            reason,
        }
    }
}

/// Up to `max` entries of the folder of `typed` whose names start with its last part:
/// folders end with `/`, sorted, hidden files only when the part starts with a dot.
pub fn completions(typed: &str, max: usize) -> Vec<String> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let folder = if dir.is_empty() {
        Path::new(".")
    } else {
        Path::new(dir)
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let shown =
                name.starts_with(prefix) && (prefix.starts_with('.') || !name.starts_with('.'));
            shown.then(|| {
                let slash = if e.path().is_dir() { "/" } else { "" };
                format!("{dir}{name}{slash}")
            })
        })
        .collect();
    out.sort();
    out.truncate(max);
    out
}

/// The longest text every completion starts with (what Tab fills in).
fn common_prefix(items: &[String]) -> Option<String> {
    let first = items.first()?;
    let mut len = first.len();
    for s in &items[1..] {
        len = len.min(
            first
                .char_indices()
                .zip(s.chars())
                .find(|((_, a), b)| a != b)
                .map_or(len.min(s.len()), |((i, _), _)| i),
        );
    }
    Some(first[..len].to_string())
}

/// Shows the prompt; returns what the user decided, once they have.
pub fn show(ctx: &egui::Context, prompt: &mut PathPrompt) -> Option<Outcome> {
    let mut outcome = None;
    let modal = egui::Modal::new(egui::Id::unique("path prompt")).show(ctx, |ui| {
        ui.set_min_width(460.0);
        ui.heading(prompt.purpose.title());
        if let Some(r) = &prompt.reason {
            ui.label(RichText::new(r).weak());
        }
        let id = egui::Id::unique("path prompt field");
        // Tab completes (the field keeps the keyboard: it is not focus navigation here),
        // before the field is drawn, so it shows the completed text with the cursor at its end.
        if ui.memory(|m| m.has_focus(id))
            && ui.input_mut(|i| i.consume_key(egui::Modifiers::NONE, Key::Tab))
            && let Some(p) = common_prefix(&completions(&prompt.text, 8))
        {
            prompt.text = p;
            let mut state = egui::TextEdit::load_state(ui.ctx(), id).unwrap_or_default();
            let end = egui::text::CCursor::new(prompt.text.chars().count());
            state
                .cursor
                .set_char_range(Some(egui::text::CCursorRange::one(end)));
            state.store(ui.ctx(), id);
        }
        let field = ui.add(
            egui::TextEdit::singleline(&mut prompt.text)
                .id(id)
                .lock_focus(true)
                .desired_width(f32::INFINITY)
                .hint_text("a path, e.g. ../shared/assets/Fox.glb"),
        );
        let field = field.accessible_name(FIELD);
        // Enter in the field confirms: the field gives up the keyboard on Enter, so this is
        // read now, before the field is given the keyboard back below.
        let enter =
            (field.has_focus() || field.lost_focus()) && ui.input(|i| i.key_pressed(Key::Enter));
        let suggestions = completions(&prompt.text, 8);
        if !field.has_focus() && !ui.memory(|m| m.has_focus(id)) && outcome.is_none() {
            field.request_focus();
        }
        for s in &suggestions {
            if ui
                .selectable_label(false, RichText::new(s).monospace())
                .clicked()
            {
                prompt.text = s.clone();
            }
        }
        let path = PathBuf::from(prompt.text.trim());
        let problem = if prompt.text.trim().is_empty() {
            Some("type a path".to_string())
        } else if prompt.purpose.must_exist() && !path.is_file() {
            Some(format!("{} is not a file", path.display()))
        } else if !prompt.purpose.must_exist()
            && path
                .parent()
                .is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir())
        {
            Some("its folder does not exist".to_string())
        } else {
            None
        };
        if let Some(p) = &problem {
            ui.label(RichText::new(p).weak());
        }
        ui.horizontal(|ui| {
            let ok = ui.add_enabled(problem.is_none(), egui::Button::new(OK));
            if ok.clicked() || (enter && problem.is_none()) {
                outcome = Some(Outcome::Chosen(path.clone()));
            }
            if ui.button(CANCEL).clicked() {
                outcome = Some(Outcome::Cancelled);
            }
        });
    });
    outcome.or(modal.should_close().then_some(Outcome::Cancelled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_list_the_folder_by_prefix() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["Fox.glb", "Fox.skp", "Robot.glb", ".hidden"] {
            std::fs::write(dir.path().join(n), b"").unwrap();
        }
        std::fs::create_dir(dir.path().join("Folder")).unwrap();
        let base = format!("{}/", dir.path().display());
        let c = completions(&format!("{base}F"), 8);
        assert_eq!(
            c,
            vec![
                format!("{base}Folder/"),
                format!("{base}Fox.glb"),
                format!("{base}Fox.skp")
            ]
        );
        assert_eq!(common_prefix(&c[1..]), Some(format!("{base}Fox.")));
        assert!(!completions(&base, 8).iter().any(|s| s.contains(".hidden")));
        assert!(
            completions(&format!("{base}."), 8)
                .iter()
                .any(|s| s.ends_with(".hidden"))
        );
    }
}
