import Foundation
import Missive
import Synchronization

/// Startup: discovering, loading and registering 200 plugin files (1,000 types), against a bare
/// `dlopen` + `dlsym` loop over the same files. Every run happens in a fresh child process, because a
/// process never loads a library twice.
enum Startup {
    static let pluginCount = 200
    static let typesPerPlugin = 5

    /// Builds `pluginCount` C plugins with `typesPerPlugin` distinct types each into `directory` (once).
    static func generatePlugins(into directory: String, header: String) throws {
        let manager = FileManager.default
        let done = directory + "/.complete"
        if manager.fileExists(atPath: done) { return }
        try? manager.removeItem(atPath: directory)
        try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let indices = Array(0..<pluginCount)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for index in indices where index % 4 == worker {
                let name = String(format: "bench%03d", index)
                let source = directory + "/\(name).c"
                try? pluginSource(name).write(toFile: source, atomically: true, encoding: .utf8)
                let compiler = Process()
                compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                compiler.arguments = ["cc", "-O2", "-shared", "-fPIC", "-I", header, source, "-o", directory + "/lib\(name).so"]
                try? compiler.run()
                compiler.waitUntilExit()
                if compiler.terminationStatus != 0 { failures.withLock { $0.append(name) } }
                try? manager.removeItem(atPath: source)
            }
        }
        let failed = failures.withLock { $0 }
        guard failed.isEmpty else { throw BenchError("cc failed for \(failed.joined(separator: ", "))") }
        _ = manager.createFile(atPath: done, contents: nil)
    }

    /// A plugin with `typesPerPlugin` types named `NAME:tK`, businessIDs `NAME_tK`, as C.
    static func pluginSource(_ name: String) -> String {
        let types = (0..<typesPerPlugin).map { k in
            """
            MISSIVE_METADATA_TYPE_BUSINESS("\(name):t\(k)", "\(name)_t\(k)", MISSIVE_PERSISTENCE_COUNTED, 0);
            static const missive_type type\(k) = {
                .struct_size = sizeof(missive_type), .object_name = "\(name):t\(k)", .business_id = "\(name)_t\(k)",
                .persistence = MISSIVE_PERSISTENCE_COUNTED, .example_count = 1, .examples = examples,
                .decode = decode, .release = release, .encode = encode, .digest = digest,
            };
            """
        }.joined(separator: "\n")
        return """
            #include <stdlib.h>
            #include <string.h>
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("\(name)", "1.0.0", "Missive Benchmarks");
            static const char example[] = "{}";
            static const missive_bytes examples[] = {{(const uint8_t *)example, 2}};
            static int32_t decode(void *c, const uint8_t *p, size_t n, missive_message **out, const missive_sink *e) {
                (void)c, (void)e;
                if (n != 2 || memcmp(p, "{}", 2) != 0) return MISSIVE_INVALID_CONTENT;
                *out = (missive_message *)malloc(1);
                return MISSIVE_OK;
            }
            static void release(void *c, missive_message *m) { (void)c; free(m); }
            static int32_t encode(void *c, const missive_message *m, const missive_sink *o) { (void)c, (void)m; o->write(o->context, (const uint8_t *)"{}", 2); return MISSIVE_OK; }
            static int32_t digest(void *c, const missive_message *m, const missive_sink *o) { (void)c, (void)m; o->write(o->context, (const uint8_t *)"[bench]", 7); return MISSIVE_OK; }
            \(types)
            static const missive_type *const types[] = {\((0..<typesPerPlugin).map { "&type\($0)" }.joined(separator: ", "))};
            static const missive_plugin plugin = {
                .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "\(name)",
                .version = "1.0.0", .vendor = "Missive Benchmarks", .type_count = \(typesPerPlugin), .types = types,
            };
            const missive_plugin *missive_plugin_entry_v1(const missive_host *host) { (void)host; return &plugin; }
            """
    }

    /// In a child: loads every plugin in `directory` one way, and prints the milliseconds it took.
    static func child(mode: String, directory: String) throws {
        let start = now()
        var loaded = 0
        switch mode {
        case "floor":
            let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".so") }.sorted()
            for name in names {
                guard let handle = dlopen(directory + "/" + name, RTLD_NOW | RTLD_LOCAL) else { throw BenchError("dlopen \(name) failed") }
                if dlsym(handle, "missive_plugin_entry_v1") != nil { loaded += 1 }
            }
        case "missive", "missive-cached", "missive-lazy":
            let cache = mode == "missive" ? nil : PluginMetadataCache(file: directory + "/.metadata-cache")
            let result = MessageRegistry.discover(
                searchPath: PluginSearchPath(entries: [.init(directory: directory, source: .explicit)]), metadataCache: cache,
                loading: mode == "missive-lazy" ? .lazy : .eager)
            guard result.rejections.isEmpty else { throw BenchError("rejections: \(result.rejections.prefix(3))") }
            if let cache, cache.statistics.misses > 0 && cache.statistics.hits > 0 { throw BenchError("cache only partly warm") }
            loaded = result.plugins.count + result.deferredPlugins.count
        case "protected", "protected-changed":
            // Eager, with a warm metadata cache, the crash quarantine armed and the scanner on: this
            // executable scans (`scan-plugin`). With "-changed", the parent touched `changedFiles` files first.
            let protection = PluginProtection(
                scanner: PluginScanner(command: [try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), "scan-plugin"]),
                quarantine: PluginQuarantine(file: directory + "/.crashes"))
            let result = MessageRegistry.discover(
                searchPath: PluginSearchPath(entries: [.init(directory: directory, source: .explicit)]),
                metadataCache: PluginMetadataCache(file: directory + "/.protected-cache"), protection: protection)
            guard result.rejections.isEmpty else { throw BenchError("rejections: \(result.rejections.prefix(3))") }
            loaded = result.plugins.count
        default:
            throw BenchError("unknown startup mode \(mode)")
        }
        let elapsed = (now() - start) * 1000
        print("\(elapsed) \(loaded)")
    }

    /// How many files the "protected-changed" mode finds changed (and scans) at each start.
    static let changedFiles = 10

    /// What one startup measurement gave, per mode, in milliseconds.
    struct Measurements {
        var floor: Samples, missive: Samples, cached: Samples, lazy: Samples, protected: Samples, protectedChanged: Samples
        var files: Int
    }

    /// Runs each mode `runs` times, alternating, each in a fresh process.
    static func measure(directory: String, runs: Int) throws -> Measurements {
        var floor: [Double] = [], missive: [Double] = [], cached: [Double] = [], lazy: [Double] = [], protected: [Double] = [], changed: [Double] = []
        var files = 0
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".so") }.sorted()
        // The protected modes touch files, so they get a copy of their own: the other modes' caches stay warm.
        let protectedDirectory = directory + "-protected"
        try? FileManager.default.removeItem(atPath: protectedDirectory)
        try FileManager.default.createDirectory(atPath: protectedDirectory, withIntermediateDirectories: true)
        for name in names { try FileManager.default.copyItem(atPath: directory + "/" + name, toPath: protectedDirectory + "/" + name) }
        for run in 0..<(runs + 1) {
            let modes = ["floor", "missive", "missive-cached", "missive-lazy", "protected", "protected-changed"]
            for mode in run % 2 == 0 ? modes : modes.reversed() {
                if mode == "protected-changed" {
                    // A new modification time makes a new identity: these files are scanned again.
                    for name in names.prefix(changedFiles) {
                        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: protectedDirectory + "/" + name)
                    }
                }
                let output = try runSelf(["startup-child", mode, mode.hasPrefix("protected") ? protectedDirectory : directory])
                let fields = output.split(separator: " ")
                guard fields.count == 2, let milliseconds = Double(fields[0]), let count = Int(fields[1]) else {
                    throw BenchError("startup child printed \(output)")
                }
                files = count
                if run == 0 { continue }  // the first round warms the page cache and fills the metadata cache
                switch mode {
                case "floor": floor.append(milliseconds)
                case "missive": missive.append(milliseconds)
                case "missive-cached": cached.append(milliseconds)
                case "missive-lazy": lazy.append(milliseconds)
                case "protected": protected.append(milliseconds)
                default: changed.append(milliseconds)
                }
            }
        }
        return Measurements(
            floor: Samples(values: floor), missive: Samples(values: missive), cached: Samples(values: cached), lazy: Samples(values: lazy),
            protected: Samples(values: protected), protectedChanged: Samples(values: changed), files: files)
    }
}

/// Runs this executable with `arguments` and returns its standard output, trimmed.
func runSelf(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw BenchError("\(arguments.joined(separator: " ")) exited with \(process.terminationStatus)") }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
