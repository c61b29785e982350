//! Where a value is in a JSON text: the line and column of the value at a JSON path.
//!
//! The loader reads files through a [`serde_json::Value`] (merge patches are applied to
//! it, and every problem is collected from it), which has no positions; a problem is
//! located in the text the user wrote by its path instead: [`position`] scans that text
//! (already known to be valid JSON) and returns where the member named by the path's
//! last key starts (its key, for an object member; the value, for an array element).

/// One step of a path: an object key or an array index.
#[derive(Debug, PartialEq)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Split `a.b[2].c` (as serde_path_to_error prints paths; `.` is the root) into steps.
fn segments(path: &str) -> Option<Vec<Seg<'_>>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|s| !s.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            out.push(Seg::Index(r[..end].parse().ok()?));
            rest = &r[end + 1..];
        }
    }
    Some(out)
}

/// 1-based line and column (in characters) of the member at `path` in `text`, or
/// `None` if the text has no such member (or is not valid JSON).
pub fn position(text: &str, path: &str) -> Option<(usize, usize)> {
    let segs = segments(path)?;
    if segs.is_empty() {
        return None;
    }
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
    };
    let at = s.find(&segs)?;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some((line, col))
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.i).copied()
    }

    /// Byte offset where the member at `segs` starts, from the value at the cursor.
    fn find(&mut self, segs: &[Seg]) -> Option<usize> {
        let (first, rest) = segs.split_first()?;
        match (self.peek()?, first) {
            (b'{', Seg::Key(want)) => {
                self.i += 1;
                loop {
                    match self.peek()? {
                        b'}' => return None,
                        b',' => self.i += 1,
                        b'"' => {
                            let key_at = self.i;
                            let key = self.string()?;
                            if self.peek()? != b':' {
                                return None;
                            }
                            self.i += 1;
                            if key == *want {
                                if rest.is_empty() {
                                    return Some(key_at);
                                }
                                return self.find(rest);
                            }
                            self.skip()?;
                        }
                        _ => return None,
                    }
                }
            }
            (b'[', Seg::Index(want)) => {
                self.i += 1;
                let mut k = 0;
                loop {
                    match self.peek()? {
                        b']' => return None,
                        b',' => self.i += 1,
                        _ => {
                            if k == *want {
                                if rest.is_empty() {
                                    self.ws();
                                    return Some(self.i);
                                }
                                return self.find(rest);
                            }
                            self.skip()?;
                            k += 1;
                        }
                    }
                }
            }
            _ => None,
        }
    }

    /// A string at the cursor, unescaped.
    fn string(&mut self) -> Option<String> {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return serde_json::from_slice(&self.b[start..self.i]).ok();
                }
                _ => self.i += 1,
            }
        }
        None
    }

    /// Step over the value at the cursor.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let mut depth = 0usize;
                while self.i < self.b.len() {
                    match self.b[self.i] {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                self.i += 1;
                                return Some(());
                            }
                        }
                        _ => {}
                    }
                    self.i += 1;
                }
                None
            }
            _ => {
                while self.i < self.b.len() && !matches!(self.b[self.i], b',' | b'}' | b']') {
                    self.i += 1;
                }
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_found_by_path() {
        let text = "{\n  \"a\": {\"x\": [1, {\"y\": \"}\"}, 3]},\n  \"b\\\"c\": 2,\n  \"d\": [[0], [5, 6]]\n}";
        assert_eq!(position(text, "a"), Some((2, 3)));
        assert_eq!(position(text, "a.x[1].y"), Some((2, 19)));
        assert_eq!(position(text, "a.x[2]"), Some((2, 30)));
        assert_eq!(position(text, "b\"c"), Some((3, 3)));
        assert_eq!(position(text, "d[1][1]"), Some((4, 18)));
        assert_eq!(position(text, "a.z"), None);
        assert_eq!(position(text, "."), None);
    }
}
