#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A shared library opened with `dlopen(RTLD_NOW | RTLD_LOCAL)`.
///
/// This is the only place Missive calls `dlopen`, `dlsym` or `dlerror`. A library is never closed: once
/// a Swift shared object is unloaded, later dynamic casts anywhere in the process can crash, and plugin
/// code or data (descriptors, handles in flight) may still be referenced. The handle is owned by the
/// process for its whole life.
struct DynamicLibrary: @unchecked Sendable {
    /// The `dlopen` handle; never passed to `dlclose`.
    private let handle: UnsafeMutableRawPointer

    /// Opens the library at `path`, resolving every symbol now and keeping them out of the global scope.
    static func open(_ path: String) throws(MissiveError) -> DynamicLibrary {
        _ = dlerror()
        // A name without a slash would make dlopen search its library path instead of opening this file.
        let file = path.contains("/") ? path : "./" + path
        guard let handle = dlopen(file, RTLD_NOW | RTLD_LOCAL) else {
            throw MissiveError(.loadFailed, "dlopen failed: \(lastError() ?? "unknown error")", file: path)
        }
        return DynamicLibrary(handle: handle)
    }

    /// Identifies the loaded library: `dlopen` gives the same handle for the same file, whatever the path.
    var identity: UInt { UInt(bitPattern: handle) }

    /// The address of the exported symbol `name`, or `nil` when the library has none.
    func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        _ = dlerror()
        return dlsym(handle, name)
    }

    /// Whether the process's global scope (the executable, and the libraries loaded with it) defines the
    /// symbol `name`: `dlsym(RTLD_DEFAULT, name)`.
    static func processDefines(_ name: String) -> Bool {
        _ = dlerror()
        return dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) != nil
    }

    private static func lastError() -> String? {
        guard let message = dlerror() else { return nil }
        return String(cString: message)
    }
}
