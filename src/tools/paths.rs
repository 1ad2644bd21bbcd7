//! Path confinement: every path a tool touches resolves inside the root. Two stages, as seed 000
//! splits them: [`lexical`] is synchronous validation (empty, NUL, `..` or absolute paths escaping
//! the root: a -32602 field error), [`resolve`] touches the filesystem (missing files, symlinks
//! that lead outside: tool errors). Never opens a file.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Joins `raw` to `base` (itself inside `root`) and normalises `.`/`..` without touching the
/// filesystem. Errors are messages for the field that held `raw`.
pub fn lexical(root: &Path, base: &Path, raw: &str) -> Result<PathBuf, String> {
    if raw.is_empty() {
        return Err("expected a non-empty path".into());
    }
    if raw.contains('\0') {
        return Err("path contains a NUL byte".into());
    }
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        base.join(raw)
    };
    let mut out = PathBuf::new();
    for comp in joined.components() {
        match comp {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return Err(format!("path {raw:?} escapes the root"));
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    if !out.starts_with(root) {
        return Err(format!(
            "path {raw:?} is outside the root {}; use a path relative to the root",
            root.display()
        ));
    }
    Ok(out)
}

/// Why [`resolve`] refused a path.
#[derive(Debug)]
pub enum ResolveError {
    /// Nothing there.
    NotFound,
    /// A symlink leads outside the root (whether or not its target exists: which is not told).
    OutsideRoot,
    /// Not readable.
    PermissionDenied,
    /// Any other I/O failure.
    Io(io::Error),
}

/// Follows symlinks and checks the real path is still inside `root` (which is canonical).
pub fn resolve(root: &Path, path: &Path) -> Result<PathBuf, ResolveError> {
    match std::fs::canonicalize(path) {
        Ok(real) if real.starts_with(root) => Ok(real),
        Ok(_) => Err(ResolveError::OutsideRoot),
        Err(e) if e.kind() == io::ErrorKind::NotFound && dangles_out(root, path) => {
            Err(ResolveError::OutsideRoot)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ResolveError::NotFound),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            Err(ResolveError::PermissionDenied)
        }
        Err(e) => Err(ResolveError::Io(e)),
    }
}

/// True when `path` is a symlink whose target, read lexically, is outside `root`: a dangling link
/// out of the root is refused as leaving it, not reported missing (that would tell what exists
/// outside).
fn dangles_out(root: &Path, path: &Path) -> bool {
    let Ok(target) = std::fs::read_link(path) else {
        return false;
    };
    let base = path.parent().unwrap_or(root);
    let raw = target.to_string_lossy();
    lexical(Path::new("/"), base, &raw).is_ok_and(|t| !t.starts_with(root))
}

/// `path` relative to `root` for display (`.` for the root itself).
pub fn display(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_rules() {
        let root = Path::new("/r");
        assert_eq!(
            lexical(root, root, "a/./b/../c").unwrap(),
            PathBuf::from("/r/a/c")
        );
        assert_eq!(lexical(root, root, "/r/x").unwrap(), PathBuf::from("/r/x"));
        assert_eq!(lexical(root, root, ".").unwrap(), PathBuf::from("/r"));
        for bad in ["", "../x", "a/../../x", "/etc/passwd", "a\0b", "/r/../etc"] {
            assert!(lexical(root, root, bad).is_err(), "{bad:?} must be refused");
        }
        assert!(lexical(root, Path::new("/r/sub"), "../x").is_ok());
        assert!(lexical(root, Path::new("/r/sub"), "../../x").is_err());
    }
}
