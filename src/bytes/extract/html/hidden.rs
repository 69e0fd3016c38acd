//! Elements that the page hides: the `hidden` attribute and an inline
//! `style` with `display: none`. A browser renders neither, and pages use
//! them for menus, dialogs, templates and text meant only for scripts or
//! search engines, so their text is not page text.
//!
//! Without a document tree, the hidden element's extent is tracked by the
//! names of the elements opened inside it. It ends at its own end tag, or
//! at the end tag of an element it was not opened in (an ancestor's, which
//! closes it implicitly), or, for the elements whose end tag HTML lets one
//! omit (`<p>`, `<li>`, `<td>`, ...), at the start tag that implies it. So
//! a page with unbalanced tags loses at most the rest of the hidden
//! element's parent, never the rest of the page. The stack of names inside
//! is bounded: past [`MAX_INSIDE`] open elements, the hidden element is
//! taken to end (its text is kept rather than risking the page's).

/// How deep elements inside a hidden one are tracked.
const MAX_INSIDE: usize = 256;

/// Elements without content: `hidden` on them hides no text, and they
/// never have an end tag to wait for.
pub(crate) fn is_void(name: &[u8]) -> bool {
    matches!(
        name,
        b"area"
            | b"base"
            | b"br"
            | b"col"
            | b"embed"
            | b"hr"
            | b"img"
            | b"input"
            | b"keygen"
            | b"link"
            | b"meta"
            | b"param"
            | b"source"
            | b"track"
            | b"wbr"
    )
}

/// Whether an attribute (its name and value as written) hides its element:
/// `hidden` (except `hidden="until-found"`, whose text find-in-page shows),
/// or a `style` whose declarations include `display: none`.
pub(crate) fn hides(name: &[u8], value: &[u8]) -> bool {
    if name.eq_ignore_ascii_case(b"hidden") {
        return !value.eq_ignore_ascii_case(b"until-found");
    }
    if !name.eq_ignore_ascii_case(b"style") || value.len() < 12 {
        return false;
    }
    value.split(|&b| b == b';').any(|decl| {
        let squeezed: Vec<u8> =
            decl.iter().filter(|b| !b.is_ascii_whitespace()).map(u8::to_ascii_lowercase).collect();
        squeezed == b"display:none" || squeezed == b"display:none!important"
    })
}

/// A hidden element being skipped.
#[derive(Debug)]
pub(crate) struct Region {
    /// Its lowercased tag name.
    name: Vec<u8>,
    /// Names of the elements opened inside it and not closed yet.
    inside: Vec<Vec<u8>>,
}

impl Region {
    pub(crate) fn new(name: &[u8]) -> Region {
        Region { name: name.to_vec(), inside: Vec::new() }
    }

    /// A start tag inside the region. Returns false when it ends the region
    /// (the tag itself is then outside it).
    pub(crate) fn start(&mut self, name: &[u8], block: bool) -> bool {
        if self.inside.is_empty() && implied_end(&self.name, name, block) {
            return false;
        }
        if is_void(name) {
            return true;
        }
        if let Some(top) = self.inside.last()
            && implied_end(top, name, block)
        {
            self.inside.pop();
        }
        if self.inside.len() >= MAX_INSIDE {
            return false;
        }
        self.inside.push(name.to_vec());
        true
    }

    /// An end tag inside the region. Returns false when it ends the region:
    /// the hidden element's own end tag, or one of an element around it.
    pub(crate) fn end(&mut self, name: &[u8]) -> bool {
        match self.inside.iter().rposition(|n| n == name) {
            Some(at) => {
                self.inside.truncate(at);
                true
            }
            None => false,
        }
    }
}

/// Whether a start tag `next` implies the end of an open `open` element
/// (the HTML rules for omitted end tags, for the elements that have them).
fn implied_end(open: &[u8], next: &[u8], block: bool) -> bool {
    match open {
        b"p" => block || next == b"pre" || next == b"listing" || next == b"table",
        b"li" => next == b"li",
        b"dt" | b"dd" => next == b"dt" || next == b"dd",
        b"option" => next == b"option" || next == b"optgroup",
        b"tr" => next == b"tr",
        b"td" | b"th" => next == b"td" || next == b"th" || next == b"tr",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_that_hide() {
        assert!(hides(b"hidden", b""));
        assert!(hides(b"HIDDEN", b"hidden"));
        assert!(!hides(b"hidden", b"until-found"));
        assert!(!hides(b"aria-hidden", b"true"));
        assert!(hides(b"style", b"color: red; display : NONE"));
        assert!(hides(b"style", b"display:none !important"));
        assert!(!hides(b"style", b"display: block"));
        assert!(!hides(b"style", b"--display: none-ish"));
        assert!(!hides(b"class", b"display:none"));
    }

    #[test]
    fn a_region_ends_at_its_end_tag_or_an_ancestors() {
        let mut r = Region::new(b"div");
        assert!(r.start(b"div", true));
        assert!(r.start(b"img", false));
        assert!(r.end(b"div"));
        assert!(!r.end(b"div"), "its own end tag");
        let mut r = Region::new(b"span");
        assert!(r.start(b"b", false));
        assert!(!r.end(b"section"), "an ancestor's end tag");
        // <p hidden>a<div>: the div closes the p.
        assert!(!Region::new(b"p").start(b"div", true));
        assert!(Region::new(b"p").start(b"span", false));
        // <li> inside a hidden <ul>: implied ends inside do not end it.
        let mut r = Region::new(b"ul");
        assert!(r.start(b"li", true) && r.start(b"li", true) && r.start(b"li", true));
        assert!(!r.end(b"ul"));
    }
}
