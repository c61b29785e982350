//! The seal of a model `import-host` wrote: `notes.import_sha256`, the SHA-256 (lowercase
//! hex) of the file's text as written with that note's value all zeros.
//!
//! `import-host --out FILE` writes over an earlier import only while its seal still
//! matches: a model a user has edited since (a cost measured, a queue bound by hand) is
//! the user's file, and irqsim never writes over a file it did not write. Any edit, even
//! of white space, breaks the seal; an import of an older irqsim has none. The loader
//! reads the note as any other (notes are not used by the simulation).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The note's key under `notes`.
pub const NOTE: &str = "import_sha256";

/// The note's value while the digest is taken: 64 zeros.
const BLANK: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// `json` (a model, an object) as the text `import-host` writes: pretty JSON with a final
/// newline, sealed with [`NOTE`].
pub fn sealed_text(json: &mut Value) -> String {
    let notes = json
        .as_object_mut()
        .expect("a model is a JSON object")
        .entry("notes")
        .or_insert_with(|| Value::Object(Default::default()));
    notes
        .as_object_mut()
        .expect("notes is an object")
        .insert(NOTE.into(), Value::String(BLANK.into()));
    let text = serde_json::to_string_pretty(json).expect("a JSON value serialises") + "\n";
    let at = seal_at(&text).expect("the note was just written, once");
    let digest = sha256(&text);
    notes_set(json, &digest);
    format!("{}{digest}{}", &text[..at], &text[at + BLANK.len()..])
}

/// Whether `text` carries an intact seal: exactly one [`NOTE`], whose value is the
/// digest of the text with it blanked.
pub fn unedited(text: &str) -> bool {
    let Some(at) = seal_at(text) else {
        return false;
    };
    let seal = &text[at..at + BLANK.len()];
    let blank = format!("{}{BLANK}{}", &text[..at], &text[at + BLANK.len()..]);
    sha256(&blank) == seal
}

/// Where the seal's 64 hex digits start, when the text has exactly one seal.
fn seal_at(text: &str) -> Option<usize> {
    let key = format!("\"{NOTE}\": \"");
    let mut found = text.match_indices(&key);
    let (i, _) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let at = i + key.len();
    let digits = text.get(at..at + BLANK.len())?;
    (digits.bytes().all(|b| b.is_ascii_hexdigit()) && text[at + BLANK.len()..].starts_with('"'))
        .then_some(at)
}

fn notes_set(json: &mut Value, digest: &str) {
    json["notes"][NOTE] = Value::String(digest.into());
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_model_is_unedited_until_a_byte_changes() {
        let mut json =
            serde_json::json!({"description": "Host imported from d", "cpu": {"clock_mhz": 3600}});
        let text = sealed_text(&mut json);
        assert!(unedited(&text), "{text}");
        // The value in `json` is the one in the text.
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, json);
        assert_eq!(json["notes"][NOTE].as_str().unwrap().len(), 64);
        // An edit of a value, of white space, or a second seal breaks it.
        assert!(!unedited(&text.replace("3600", "3601")));
        assert!(!unedited(&text.replacen("  ", "   ", 1)));
        assert!(!unedited(&format!("{text} ")));
        let seal = json["notes"][NOTE].as_str().unwrap().to_string();
        let twice = text.replace("\"cpu\": {", &format!("\"cpu\": {{\"{NOTE}\": \"{seal}\","));
        assert_eq!(twice.matches(NOTE).count(), 2);
        assert!(!unedited(&twice));
        // A model without a seal (an older irqsim's import) is not taken as unedited.
        assert!(!unedited("{\"description\": \"Host imported from d\"}\n"));
    }
}
