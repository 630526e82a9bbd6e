import Foundation
import Missive
import Testing

/// Where the built plugins, fixtures and the `missive` executable are, and helpers to stage them.
///
/// `swift build` and `swift test` put every product of the package in the folder of the test bundle,
/// so the tests find the real `.so` files there and load them through the real loader.
package enum Fixtures {
    /// The build products folder.
    package static let buildDirectory: String = PluginSearchPath.executableDirectory()!

    /// The repository's root.
    package static let repositoryRoot: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The sample plugin products.
    package static let samplePlugins = ["DemoMessages", "DemoMedia", "CRating", "MatrixBridge"]

    /// The path of the built product `name` (`lib<name>.so`).
    package static func library(_ name: String) -> String {
        "\(buildDirectory)/lib\(name).so"
    }

    /// The path of the fixture plugin product `name` (`lib<name>.so`): a deliberately broken plugin such as
    /// `BrokenNoEntry`, or a variant of the C sample such as `RatingOlder`.
    ///
    /// The fixtures are a package of their own (`Tests/Fixtures/BrokenPlugins`), so that they never land
    /// beside the `missive` executable, on its default search path. The first call builds that package into
    /// `fixtures` in the scratch folder (`.build/fixtures` by default), once per test process.
    package static func fixtureLibrary(_ name: String) throws -> String {
        "\(try fixtureBuildDirectory.get())/lib\(name).so"
    }

    /// The scratch folder the fixture package is built in: `fixtures` inside the scratch folder of this
    /// build (`.build/fixtures`, or `.build-checks/fixtures` after `swift test --scratch-path .build-checks`),
    /// so that test runs from different scratch folders never wait for each other's fixture builds.
    private static let fixtureScratch: String = {
        let root = repositoryRoot + "/"
        if buildDirectory.hasPrefix(root), let scratch = buildDirectory.dropFirst(root.count).split(separator: "/").first {
            return root + scratch + "/fixtures"
        }
        return root + ".build/fixtures"
    }()

    /// The folder the broken plugins are built into, or why building them failed.
    private static let fixtureBuildDirectory: Result<String, FixtureBuildError> = {
        let package = repositoryRoot + "/Tests/Fixtures/BrokenPlugins"
        let scratch = fixtureScratch
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "--package-path", package, "--scratch-path", scratch]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            return .failure(FixtureBuildError(description: "cannot run swift build for the broken plugins: \(error)"))
        }
        let log = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(FixtureBuildError(description: "building the broken plugins failed:\n" + String(decoding: log, as: UTF8.self)))
        }
        return .success(scratch + "/debug")
    }()

    /// Why the broken plugins could not be built.
    package struct FixtureBuildError: Error, CustomStringConvertible {
        package let description: String
    }

    /// The folder every scratch file of this test process goes in: `missive-tests.<pid>` in the system's
    /// temporary directory.
    ///
    /// Loaded plugins are never unloaded, so the files staged for them must stay while the process runs; the
    /// whole folder is removed when the process exits. A run that was killed or crashed cannot do that, so the
    /// folders of test processes that no longer exist are removed when the next one makes its own. Without
    /// this, every run of the suite left about a gigabyte behind (the examples' builds, the staged plugins).
    package static let scratchRoot: String = {
        let temporary = NSTemporaryDirectory()
        let prefix = "missive-tests."
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary + name)
            }
        }
        let root = temporary + prefix + String(getpid())
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: Fixtures.scratchRoot) }
        return root
    }()

    /// A path in ``scratchRoot`` that nothing uses yet, named `<name>-<UUID>`; nothing is made there.
    package static func scratchPath(_ name: String) -> String {
        scratchRoot + "/" + name + "-" + UUID().uuidString
    }

    /// A new empty folder in ``scratchRoot``.
    package static func temporaryDirectory() throws -> String {
        let path = scratchPath("folder")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A new folder holding copies of the given products, optionally renamed (`[product: file name]`).
    /// Products the package builds come from its build folder, the others from the fixture package.
    package static func stage(_ products: [String], renamed: [String: String] = [:]) throws -> String {
        let directory = try temporaryDirectory()
        for product in products {
            let name = renamed[product] ?? "lib\(product).so"
            let source = FileManager.default.fileExists(atPath: library(product)) ? library(product) : try fixtureLibrary(product)
            try FileManager.default.copyItem(atPath: source, toPath: "\(directory)/\(name)")
        }
        return directory
    }

    /// A search path of exactly these folders.
    package static func searchPath(_ directories: String...) -> PluginSearchPath {
        .standard(explicitDirectories: directories, environment: [:], includeDefaults: false)
    }

    /// The sample conversation, one envelope per line.
    package static func conversationLines() throws -> [[UInt8]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: repositoryRoot + "/SampleData/conversation.jsonl"))
        return Array(data).split(separator: 0x0A).map(Array.init)
    }

    /// A registry with the built-ins and the three sample plugins, loaded from a private copy.
    package static func sampleRegistry() throws -> MessageRegistry {
        let result = MessageRegistry.discover(searchPath: searchPath(try stage(samplePlugins)))
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        return result.registry
    }

    /// The metadata cache the CLI runs of this test process share, instead of the user's own.
    package static let cliMetadataCache = scratchRoot + "/metadata-cache"

    /// The files mapped into this process, from `/proc/self/maps`.
    package static func mappedFiles() throws -> Set<String> {
        // /proc files report a size of 0, so read until the end instead of by size.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init)
        })
    }

    /// An envelope around `content`.
    package static func envelope(
        _ objectName: String, _ content: String, persistence: Persistence? = nil, fallbackText: String? = nil
    ) -> Envelope {
        Envelope(
            id: "t1", conversationID: "c1", senderID: "u1", sentAt: 1_700_000_000_000, objectName: objectName,
            content: Array(content.utf8), persistence: persistence, fallbackText: fallbackText)
    }
}

extension Array where Element == UInt8 {
    /// The bytes as UTF-8 text, for readable expectations.
    package var text: String { String(decoding: self, as: UTF8.self) }
}

/// What a run under a sanitizer (`bash Scripts/sanitize.sh thread|address`; docs/SANITIZERS.md) changes in
/// the outcomes the tests expect. In a normal run every expectation is the plain one.
package enum SanitizerRun {
    /// The sanitizer the test bundle (and with it the `missive` executable) was built with, or `nil`.
    package static let current = Sanitizer.current

    /// The exit code of a process the sanitizer stopped after its report: its default, which
    /// `Scripts/sanitize.sh` keeps (66 for ThreadSanitizer, 1 for AddressSanitizer); `nil` in a normal run.
    package static var exitCode: Int32? {
        switch current {
        case .thread: 66
        case .address: 1
        case nil: nil
        }
    }

    /// A test's time limit: `minutes` in a normal run, four times as long under a sanitizer, which makes the
    /// code several times slower (the 100,000-message ingest of `StoreCLITests` ran past its 5 minutes).
    package static func timeLimit(minutes: Int) -> TimeLimitTrait {
        .timeLimit(.minutes(current == nil ? minutes : minutes * 4))
    }

    /// The outcome of a heap check (`memory.release`, `memory.errors`) that gives `outcome` in a normal run.
    /// The checks measure glibc's heap counters, which a sanitizer's allocator leaves still, so they skip.
    package static func memoryCheck(_ outcome: String) -> String {
        current == nil ? outcome : "skipped"
    }

    /// How the checker words a check child that plugin code killed with `SIGSEGV`: by the signal in a normal
    /// run; under a sanitizer, whose handler takes the fault, reports it and exits, by the exit code.
    package static var segfaultInCheck: String {
        exitCode.map { "exited with code \($0)" } ?? "SIGSEGV (signal 11)"
    }

    /// How the checker words a check child whose plugin code overflowed its stack. AddressSanitizer takes the
    /// fault on an alternate stack, reports a stack overflow and exits; ThreadSanitizer's handler has no stack
    /// left to run on, so the signal kills the child, as in a normal run.
    package static var stackOverflowInCheck: String {
        current == .address ? segfaultInCheck : "SIGSEGV (signal 11)"
    }

    /// How the plugin scanner words a scan that plugin code killed with `SIGSEGV`, as `segfaultInCheck`.
    package static var segfaultInScan: String {
        exitCode.map { "exited with status \($0)" } ?? "SIGSEGV (signal 11)"
    }

    /// What the sanitizer's summary of a segmentation fault starts with (`SUMMARY: ThreadSanitizer: SEGV`),
    /// which the scanner quotes from the child's last lines; `SIGSEGV` in a normal run.
    package static var segfaultSummary: String {
        current.map { "SUMMARY: \($0.rawValue): SEGV" } ?? "SIGSEGV"
    }

    /// The options that built this test bundle (`--sanitize=...` and the linker flags that export the
    /// runtime's symbols to plugins), which `Scripts/sanitize.sh` passes in `MISSIVE_SANITIZER_BUILD_FLAGS`,
    /// for a host built by a test that must load the instrumented sample plugins; none in a normal run.
    package static var buildFlags: [String] {
        guard current != nil else { return [] }
        let flags = ProcessInfo.processInfo.environment["MISSIVE_SANITIZER_BUILD_FLAGS"] ?? ""
        return flags.split(separator: " ").map(String.init)
    }
}
