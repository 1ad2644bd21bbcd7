//! Opening files beneath the root without a check-then-open race: the kernel resolves the path
//! relative to a handle on the root and refuses any step that would leave it (`openat2` with
//! `RESOLVE_BENEATH`: `..` past the root, a symlink leading out), and the kind of file is checked
//! on the open handle (`fstat`), so a file or link swapped after validation can neither hand out a
//! file outside the root nor give a reader a FIFO or a device.
//!
//! Owns the open and the refusal reasons. It never reads, and its errors never name anything
//! outside the root (a refused link's target, whether it exists). Where `openat2` is missing
//! (Linux before 5.6, some seccomp filters) the canonical path is opened and the handle's own path
//! (`/proc/self/fd/N`) must still be inside the root.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};

/// Why a path could not be opened beneath the root.
#[derive(Debug)]
pub enum OpenError {
    /// Nothing there (inside the root).
    NotFound,
    /// Resolution leaves the root (through a symlink, or a file swapped for one).
    OutsideRoot,
    /// Not readable.
    PermissionDenied,
    /// Opened, but not a regular file; `dir` when it is a directory.
    NotRegular { dir: bool },
    /// Any other I/O failure.
    Io(io::Error),
}

/// What [`open_file`] opened.
#[derive(Debug)]
pub struct Opened {
    /// The open handle: every later read goes through it, never through the path again.
    pub file: File,
    /// `fstat` of the handle.
    pub meta: Metadata,
    /// The path of the opened file inside the root (symlinks resolved), for display.
    pub real: PathBuf,
}

/// Opens `path` (lexically inside `root`, which is canonical) for reading, beneath `root`, and
/// accepts only a regular file.
pub fn open_file(root: &Path, path: &Path) -> Result<Opened, OpenError> {
    Beneath::new(root)?.open_file(path)
}

/// Opens the directory `path` (lexically inside `root`, which is canonical) beneath `root`, for
/// a command to start in (`fchdir` on the handle): whatever is swapped in at that path after the
/// check, the handle is the directory that was checked. Returns the handle and its path inside
/// the root, for display.
pub fn open_dir(root: &Path, path: &Path) -> Result<(File, PathBuf), OpenError> {
    let rel = path
        .strip_prefix(root)
        .map_err(|_| OpenError::OutsideRoot)?;
    let root_dir = File::open(root).map_err(classify)?;
    let file = open_beneath(root, &root_dir, path, rel)?;
    let meta = file.metadata().map_err(OpenError::Io)?;
    if !meta.is_dir() {
        return Err(OpenError::NotRegular { dir: false });
    }
    let real = fd_path(&file)
        .filter(|p| p.starts_with(root))
        .unwrap_or_else(|| path.to_path_buf());
    Ok((file, real))
}

/// A handle on the root, opened once, for many opens beneath it (grep's walk).
pub struct Beneath {
    /// The root's canonical path, which walked paths are made relative to.
    root: PathBuf,
    /// The root opened as a directory: every open resolves beneath it.
    dir: File,
}

impl Beneath {
    /// Opens the root (canonical).
    pub fn new(root: &Path) -> Result<Beneath, OpenError> {
        Ok(Beneath {
            root: root.to_path_buf(),
            dir: File::open(root).map_err(classify)?,
        })
    }

    /// [`open_file`] through this root handle. A path with no symlink on it is opened in one
    /// `openat2` (`RESOLVE_NO_SYMLINKS`) and its real path is the path itself; only a path through
    /// a symlink pays for a second resolution and asks the kernel for the handle's path.
    pub fn open_file(&self, path: &Path) -> Result<Opened, OpenError> {
        let rel = path
            .strip_prefix(&self.root)
            .map_err(|_| OpenError::OutsideRoot)?;
        let (file, real) = match openat2(&self.dir, rel, true) {
            Ok(f) => (f, Some(path.to_path_buf())),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV)) => {
                (open_beneath(&self.root, &self.dir, path, rel)?, None)
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => (fallback(&self.root, path)?, None),
            Err(e) => return Err(classify(e)),
        };
        let meta = file.metadata().map_err(OpenError::Io)?;
        if !meta.is_file() {
            return Err(OpenError::NotRegular { dir: meta.is_dir() });
        }
        let real = real.unwrap_or_else(|| {
            fd_path(&file)
                .filter(|p| p.starts_with(&self.root))
                .unwrap_or_else(|| path.to_path_buf())
        });
        Ok(Opened { file, meta, real })
    }
}

/// The open through symlinks: `openat2` beneath the root; on `EXDEV` (an absolute symlink, even
/// one that points back inside the root, is refused by `RESOLVE_BENEATH`) the canonical path is
/// checked and opened with no symlink allowed, so a swap between the two steps fails instead of
/// escaping.
fn open_beneath(root: &Path, root_dir: &File, path: &Path, rel: &Path) -> Result<File, OpenError> {
    match openat2(root_dir, rel, false) {
        Ok(f) => Ok(f),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            let real = match std::fs::canonicalize(path) {
                Ok(real) => real,
                // A link out of the root to nothing: say it leaves the root, not that nothing is
                // there (which would tell what exists outside).
                Err(_) => return Err(OutsideRoot),
            };
            let rel = real.strip_prefix(root).map_err(|_| OutsideRoot)?;
            openat2(root_dir, rel, true).map_err(|e| match e.raw_os_error() {
                Some(libc::ELOOP) | Some(libc::EXDEV) => OutsideRoot,
                _ => classify(e),
            })
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => fallback(root, path),
        Err(e) => Err(classify(e)),
    }
}

use OpenError::OutsideRoot;

/// Maps an open error to a refusal reason.
fn classify(e: io::Error) -> OpenError {
    match e.kind() {
        io::ErrorKind::NotFound => OpenError::NotFound,
        io::ErrorKind::PermissionDenied => OpenError::PermissionDenied,
        _ if e.raw_os_error() == Some(libc::EXDEV) => OutsideRoot,
        _ => OpenError::Io(e),
    }
}

/// `openat2(root_dir, rel, O_RDONLY | O_NONBLOCK, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`, plus
/// `RESOLVE_NO_SYMLINKS` when `no_symlinks`. `O_NONBLOCK`: opening a FIFO must not wait for a
/// writer (the handle is refused right after, by `fstat`); it changes nothing for regular files.
fn openat2(root_dir: &File, rel: &Path, no_symlinks: bool) -> io::Result<File> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::ffi::OsStrExt;
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let c = CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    let mut resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    if no_symlinks {
        resolve |= libc::RESOLVE_NO_SYMLINKS;
    }
    // SAFETY: `open_how` is plain data; zeroed is a valid value and every field is then set.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK) as u64;
    how.resolve = resolve;
    // SAFETY: the directory fd and the C string outlive the call; `how` is a valid `open_how`
    // of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root_dir.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new, owned file descriptor.
    Ok(unsafe { File::from_raw_fd(fd as i32) })
}

/// Without `openat2`: open the canonical path, then require the handle's own path to be inside
/// the root (a swap after the check shows there).
fn fallback(root: &Path, path: &Path) -> Result<File, OpenError> {
    use std::os::unix::fs::OpenOptionsExt;
    let real = std::fs::canonicalize(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound if std::fs::symlink_metadata(path).is_ok() => OutsideRoot,
        _ => classify(e),
    })?;
    if !real.starts_with(root) {
        return Err(OutsideRoot);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&real)
        .map_err(classify)?;
    match fd_path(&file) {
        Some(p) if p.starts_with(root) => Ok(file),
        _ => Err(OutsideRoot),
    }
}

/// The path the kernel holds for an open handle.
fn fd_path(file: &File) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, root)
    }

    #[test]
    fn opens_regular_files_and_links_inside() {
        let (_d, root) = root();
        std::fs::write(root.join("a.txt"), "x").unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("rel")).unwrap();
        std::os::unix::fs::symlink(root.join("a.txt"), root.join("abs")).unwrap();
        for name in ["a.txt", "rel", "abs"] {
            let o = open_file(&root, &root.join(name)).unwrap();
            assert_eq!(o.real, root.join("a.txt"), "{name}");
            assert!(o.meta.is_file());
        }
    }

    #[test]
    fn refuses_links_out_dirs_fifos_and_devices() {
        let (_d, root) = root();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/secret", root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("zero")).unwrap();
        std::os::unix::fs::symlink("../../../../../../etc/passwd", root.join("up")).unwrap();
        for name in ["out", "dangling", "zero", "up"] {
            assert!(
                matches!(open_file(&root, &root.join(name)), Err(OutsideRoot)),
                "{name}"
            );
        }
        std::fs::create_dir(root.join("d")).unwrap();
        assert!(matches!(
            open_file(&root, &root.join("d")),
            Err(OpenError::NotRegular { dir: true })
        ));
        let fifo = std::ffi::CString::new(root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid C string path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            open_file(&root, &root.join("fifo")),
            Err(OpenError::NotRegular { dir: false })
        ));
        assert!(matches!(
            open_file(&root, &root.join("missing")),
            Err(OpenError::NotFound)
        ));
    }
}
