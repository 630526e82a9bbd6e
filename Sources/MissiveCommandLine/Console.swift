import ArgumentParser
import Foundation
import Missive

/// Writes text to standard output or standard error: the one way out of the CLI, so that no escape
/// sequence, control character or bidi control from a sender or a plugin reaches the operator's terminal.
///
/// Every write goes through ``write(_:to:)``, with `write(2)` and no buffering of its own. A write that fails
/// ends the command at once with a status that says why (``Status``), never with a crash: a reader that went
/// away (`EPIPE`, as when the output goes to `head`) ends it quietly, any other failure (a full disk, a closed
/// descriptor) with a message on standard error when that still works.
package enum Console {
    /// The exit statuses of a failed write.
    package enum Status {
        /// The reader of a pipe went away: 128 + `SIGPIPE`, what a shell reports for a program that
        /// `SIGPIPE` ended.
        package static let brokenPipe: Int32 = 128 + SIGPIPE
        /// Standard output or standard error could not be written for another reason: `EX_IOERR`.
        package static let cannotWrite: Int32 = 74
    }

    /// Writes text, cleaned by ``TextHygiene/block(_:)``: its own line breaks stay, nothing else that a
    /// terminal acts on does.
    package static func out(_ text: String) {
        write(Array((TextHygiene.block(text) + "\n").utf8), to: STDOUT_FILENO)
    }

    /// Writes JSON, with raw unsafe code points inside its strings written as `\u` escapes: the same JSON.
    package static func out(bytes: [UInt8]) {
        write(MissiveJSONWriter.displaySafe(json: bytes) + [0x0A], to: STDOUT_FILENO)
    }

    /// Writes what a renderer drew, unchanged: every string from a sender or a plugin in it is already
    /// cleaned, and its only escape sequences are the renderer's own colours.
    package static func drawn(_ text: String) {
        write(Array(text.utf8), to: STDOUT_FILENO)
    }

    /// Ends the process as a write would after the reader of standard output went away (``Status/brokenPipe``),
    /// checking every `interval` until the task is cancelled: for a command that may wait long between two
    /// writes (`store follow`), so that `missive store follow | head -1` ends when `head` does, not at the next
    /// change. Only a pipe or a socket reports that its reader is gone; a file or a terminal never ends it.
    package static func endWhenOutputCloses(checkingEvery interval: Duration = .milliseconds(200)) async {
        while !Task.isCancelled {
            var watched = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
            if poll(&watched, 1, 0) == 1, watched.revents & Int16(POLLERR) != 0 { exit(Status.brokenPipe) }
            try? await Task.sleep(for: interval)
        }
    }

    /// The width of the terminal standard output is, or `nil` when it is not a terminal.
    package static var terminalColumns: Int? {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Writes the program's name (`missive: `, `missive-check: `) and the text, cleaned, to standard error.
    package static func error(_ text: String) {
        write(Array((programName + ": " + TextHygiene.block(text) + "\n").utf8), to: STDERR_FILENO)
    }

    /// The name messages begin with: the last part of the path the program was started by, as Unix tools do.
    package static let programName: String = {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "missive" : TextHygiene.line(name)
    }()

    /// Writes a progress line's bytes to standard error as they are (the caller cleaned its text).
    package static func progress(_ text: String) {
        write(Array(text.utf8), to: STDERR_FILENO)
    }

    /// Writes all of `bytes` to `descriptor`, or ends the process when it cannot (see ``Status``).
    package static func write(_ bytes: [UInt8], to descriptor: Int32) {
        if descriptor <= STDERR_FILENO && closedAtStart.contains(descriptor) { fail(descriptor, EBADF) }
        guard let failure = FileBytes.writeAll(bytes, to: descriptor) else { return }
        fail(descriptor, failure)
    }

    /// The standard streams that were closed when the process started (see ``prepare()``).
    nonisolated(unsafe) package private(set) static var closedAtStart: Set<Int32> = []

    /// Makes the standard streams safe to use; call first, before anything opens a file.
    ///
    /// A stream that is closed at start gets `/dev/null` in its place, so that the next file this process
    /// opens (a store, a journal, a plugin) cannot take its number and receive the output meant for it; the
    /// first write to it then fails as a write to a closed stream does. Output that the argument parser
    /// writes through the C library (help, usage errors) is flushed at exit, and a failure there changes
    /// the exit status as ``write(_:to:)`` does.
    package static func prepare() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if null >= 0 && null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
            closedAtStart.insert(descriptor)
        }
        atexit {
            guard fflush(nil) != 0 else { return }
            _exit(errno == EPIPE ? Console.Status.brokenPipe : Console.Status.cannotWrite)
        }
    }

    /// Ends the process after a failed write to `descriptor`: quietly for a broken pipe, otherwise with the
    /// reason on standard error (when standard error is not the one that failed).
    private static func fail(_ descriptor: Int32, _ code: Int32) -> Never {
        if code == EPIPE { exit(Status.brokenPipe) }
        if descriptor != STDERR_FILENO {
            let name = descriptor == STDOUT_FILENO ? "standard output" : "descriptor \(descriptor)"
            _ = FileBytes.writeAll("\(programName): cannot write \(name): \(String(cString: strerror(code)))\n".utf8, to: STDERR_FILENO)
        }
        exit(Status.cannotWrite)
    }
}

/// The input of `decode`, `render` and `act`: a file, or standard input for `-`.
package enum InputFile {
    /// The bytes of `path`, read as ``LineReader`` reads them (so a FIFO or a shell's `<(command)` works); a
    /// missing file, a folder or an unreadable file is reported, exit code 2.
    package static func read(_ path: String) throws -> Data {
        let reader = try LineReader(path)
        let bytes = reader.rest()
        if let failure = reader.failure {
            Console.error("\(path == "-" ? "<stdin>" : path): cannot read: \(failure)")
            throw ExitCode(2)
        }
        return Data(bytes)
    }
}

/// The `--output` of `render`: written in place, so that an existing file keeps its mode and owner and a
/// symbolic link is written through, as a shell's `>` does.
package enum OutputFile {
    /// Writes `text` to `path`; the reason it could not, or `nil`. Refuses to write over one of the
    /// `protected` files (the same file, by device and inode): the input, or a store's database, which
    /// would be lost.
    package static func write(_ text: String, to path: String, notOver protected: [(path: String, what: String)]) -> String? {
        var target = stat()
        var source = stat()
        if stat(path, &target) == 0 {
            for file in protected where stat(file.path, &source) == 0 && target.st_dev == source.st_dev && target.st_ino == source.st_ino {
                return "it is \(file.what)"
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        return FileBytes.writeAll(text.utf8, to: descriptor).map { String(cString: strerror($0)) }
    }
}

/// The lines of a file, a pipe or standard input, read a block at a time: a pipe is handled as it comes, and
/// a big file is never held whole. Owns its file descriptor, except standard input's.
package final class LineReader {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// Why reading stopped early, if it did.
    package private(set) var failure: String?

    /// Opens `path`, or standard input for `-`; a missing file, a folder or one that cannot be opened is
    /// reported, exit code 2. FIFOs, `/dev/null` and a shell's `<(command)` are read like files.
    package init(_ path: String) throws {
        if path == "-" {
            guard !Console.closedAtStart.contains(STDIN_FILENO) else {
                Console.error("<stdin>: cannot read: standard input is closed")
                throw ExitCode(2)
            }
            descriptor = STDIN_FILENO
            ownsDescriptor = false
            return
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            Console.error("\(path): cannot read: no such file")
            throw ExitCode(2)
        }
        guard !isFolder.boolValue else {
            Console.error("\(path): cannot read: it is a folder")
            throw ExitCode(2)
        }
        descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            Console.error("\(path): cannot read: \(String(cString: strerror(errno)))")
            throw ExitCode(2)
        }
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Everything not read yet, to the end.
    package func rest() -> [UInt8] {
        while !atEnd { fill() }
        defer { start = buffer.count }
        return Array(buffer[start...])
    }

    /// The next line, without its line feed; `nil` at the end.
    package func next() -> [UInt8]? {
        while true {
            if let newline = buffer.withUnsafeBufferPointer({ bytes -> Int? in
                guard start < bytes.count, let found = memchr(bytes.baseAddress! + start, 0x0A, bytes.count - start) else { return nil }
                return bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }) {
                defer { start = newline + 1 }
                return Array(buffer[start..<newline])
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Array(buffer[start...])
            }
            fill()
        }
    }

    /// Reads one more block (64 KiB at most) after what is not read yet; at the end, or on an error (kept
    /// in ``failure``), sets `atEnd`.
    private func fill() {
        buffer.removeFirst(start)
        start = 0
        // Read into a block of its own and append what came: one copy, rather than growing the buffer by 64 KiB of
        // zeros element by element and shrinking it back (which, unoptimized, cost a debug build's every run of a
        // command tens of milliseconds).
        let (read, error) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65_536) { block in
            let read = Glibc.read(descriptor, block.baseAddress!, 65_536)
            let error = errno  // before anything else can change it
            if read > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: block[..<read])) }
            return (read, error)
        }
        if read == 0 { atEnd = true }
        if read < 0, error != EINTR {
            failure = String(cString: strerror(error))
            atEnd = true
        }
    }
}
