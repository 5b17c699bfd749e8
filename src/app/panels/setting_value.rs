//! The number fields that edit settings (tolerances, marker offsets, the unit): every edit
//! recompresses and may ask a question (a tolerance below a joint's floor), so a value typed
//! as text is applied once, on Enter or when the field loses focus, never per keystroke (the
//! "0" of "0.05" is not a tolerance anyone asked for). Dragging stays live.

/// A [`egui::DragValue`] on `value` that applies typed text on Enter or focus loss only.
pub fn drag<'a, N: egui::emath::Numeric>(value: &'a mut N) -> egui::DragValue<'a> {
    egui::DragValue::new(value).update_while_editing(false)
}
