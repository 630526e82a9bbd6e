import Foundation
@_spi(Benchmarks) import Missive

/// Actions: one call of a plugin's action function through `ffi_call` with its cached call interface,
/// against a direct call of the same C function through a typed pointer; and, apart, what checking and
/// converting JSON arguments costs.
enum Actions {
    /// Calls per run of each loop.
    static let calls = 1_000_000

    /// The C signature of the benchmark's action: a value of every kind the grammar has, and the sink.
    static let signature = "int32(int32 a, int64 b, double c, bool d, string e, sink out)"

    /// The function as a typed pointer: what a direct call uses.
    typealias Direct = @convention(c) (Int32, Int64, Double, Bool, UnsafePointer<CChar>?, UnsafeRawPointer?) -> Int32

    struct Result {
        var direct = Samples(values: [])
        var ffi = Samples(values: [])
        var checkJSON = Samples(values: [])
        var checkTyped = Samples(values: [])
        var compose = Samples(values: [])
    }

    /// Builds `libbenchactions.so` into `directory` (once): a type and a composer action whose function does
    /// a few operations on its arguments and returns MISSIVE_OK without writing, so that the call is what is
    /// measured.
    static func generatePlugin(into directory: String, header: String) throws {
        let library = directory + "/libbenchactions.so"
        if FileManager.default.fileExists(atPath: library) { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let source = """
            #include <stdbool.h>
            #include <string.h>
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("BenchActions", "1.0.0", "Missive Benchmarks");
            MISSIVE_METADATA_TYPE("bench:actions", MISSIVE_PERSISTENCE_COUNTED, 0);
            MISSIVE_METADATA_COMPOSER_ACTION("bench.call", "bench:actions", "Call", "bolt", 0, "\(signature)", "bench_call");
            static const char example[] = "{}";
            static const missive_bytes examples[] = {{(const uint8_t *)example, 2}};
            static int32_t decode(void *c, const uint8_t *p, size_t n, missive_message **out, const missive_sink *e) {
                (void)c, (void)e;
                if (n != 2 || memcmp(p, "{}", 2) != 0) return MISSIVE_INVALID_CONTENT;
                *out = (missive_message *)1;
                return MISSIVE_OK;
            }
            static void release(void *c, missive_message *m) { (void)c, (void)m; }
            static int32_t encode(void *c, const missive_message *m, const missive_sink *o) { (void)c, (void)m; missive_write_string(o, "{}"); return MISSIVE_OK; }
            static int32_t digest(void *c, const missive_message *m, const missive_sink *o) { (void)c, (void)m; missive_write_string(o, "bench"); return MISSIVE_OK; }
            MISSIVE_EXPORT int32_t bench_call(int32_t a, int64_t b, double c, bool d, const char *e, const missive_sink *out) {
                (void)out;
                return (a ^ (int32_t)b ^ (int32_t)c ^ (int32_t)d ^ e[0]) == 0x7fffffff ? MISSIVE_FAILED : MISSIVE_OK;
            }
            static const missive_action call = {
                .struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_COMPOSER, .id = "bench.call", .object_name = "bench:actions",
                .title = "Call", .icon = "bolt", .signature = "\(signature)", .symbol = "bench_call",
            };
            static const missive_action *const actions[] = {&call};
            static const missive_actions_v1 extension = {sizeof(missive_actions_v1), 1, actions};
            static const void *get(void *c, const char *id) { (void)c; return strcmp(id, MISSIVE_ACTIONS_EXTENSION) == 0 ? &extension : NULL; }
            static const missive_type type = {
                .struct_size = sizeof(missive_type), .object_name = "bench:actions", .persistence = MISSIVE_PERSISTENCE_COUNTED,
                .example_count = 1, .examples = examples, .decode = decode, .release = release, .encode = encode, .digest = digest,
            };
            static const missive_type *const types[] = {&type};
            static const missive_plugin plugin = {
                .abi_version = MISSIVE_ABI_VERSION, .struct_size = sizeof(missive_plugin), .name = "BenchActions", .version = "1.0.0",
                .vendor = "Missive Benchmarks", .type_count = 1, .types = types, .get_plugin_extension = get,
            };
            MISSIVE_EXPORT const missive_plugin *missive_plugin_entry_v1(const missive_host *host) { (void)host; return &plugin; }
            """
        let file = directory + "/benchactions.c"
        try source.write(toFile: file, atomically: true, encoding: .utf8)
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-O2", "-shared", "-fPIC", "-I", header, file, "-o", library]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else { throw BenchError("cc failed for the actions plugin") }
    }

    /// Times each loop `runs` times (plus a warm-up), in nanoseconds per call.
    static func measure(directory: String, samples: MessageRegistry, runs: Int) throws -> Result {
        let discovery = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: directory, source: .explicit)]))
        guard let action = discovery.registry.composerActions.first(where: { $0.id == "bench.call" }) else {
            throw BenchError("the actions plugin did not load: \(discovery.rejections)")
        }
        let function = try discovery.registry.function(of: action)
        let direct = unsafeBitCast(function.address, to: Direct.self)
        let json: [ActionArgument] = ["7", "-42", "2.5", "true", #""hello""#].map { ActionArgument(json: $0) }
        let typed: [ActionArgument] = [7, -42, 2.5, true, "hello"]
        let values = try ActionArguments.values(json, for: action)
        let sink = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 8)
        defer { sink.deallocate() }
        let text = strdup("hello")!
        defer { free(text) }
        func perCall(_ body: () -> Int) -> Double {
            let start = now()
            let sum = body()
            let elapsed = now() - start
            if sum == Int.min { print("") }  // keeps the work observable
            return elapsed / Double(calls) * 1e9
        }
        var result = Result()
        let rate = samples.composerActions.first { $0.id == "demo.rating.create" }
        for run in 0...runs {
            let directTime = perCall {
                var sum = 0
                for index in 0..<calls { sum &+= Int(direct(Int32(truncatingIfNeeded: index), -42, 2.5, true, text, sink)) }
                return sum
            }
            let ffiTime = perCall {
                var sum = 0
                for _ in 0..<calls { sum &+= Int(function.call(message: nil, values: values, sink: UnsafeRawPointer(sink))) }
                return sum
            }
            let jsonTime = perCall {
                var sum = 0
                for _ in 0..<calls { sum &+= (try? ActionArguments.values(json, for: action).count) ?? 0 }
                return sum
            }
            let typedTime = perCall {
                var sum = 0
                for _ in 0..<calls { sum &+= (try? ActionArguments.values(typed, for: action).count) ?? 0 }
                return sum
            }
            // A whole composer action through the registry, for scale: 1/100 of the calls.
            var composeTime = 0.0
            if let rate {
                composeTime = perCall {
                    var sum = 0
                    for _ in 0..<(calls / 100) {
                        sum &+= (try? samples.compose(action: rate.id, arguments: [4, "Nice"], conversationID: "c", senderID: "s", id: "x", sentAt: 0))?.envelope.content.count ?? 0
                    }
                    return sum
                } * 100
            }
            if run == 0 { continue }
            result.direct.values.append(directTime)
            result.ffi.values.append(ffiTime)
            result.checkJSON.values.append(jsonTime)
            result.checkTyped.values.append(typedTime)
            result.compose.values.append(composeTime)
        }
        return result
    }

    static func report(_ result: Result) {
        print("## Actions: \(calls) calls of one C function, `\(signature)`\n")
        print("| what | ns per call, median (min–max) |")
        print("|---|---|")
        print("| direct call through a typed function pointer | \(result.direct.summary(1)) |")
        print("| `ffi_call` with the cif prepared at load (`ActionFunction.call`, values converted) | \(result.ffi.summary(1)) |")
        print("| **`ffi_call` over the direct call** | **\(format(result.ffi.median - result.direct.median, 1))** |")
        print("| check and convert 5 JSON arguments (`ActionArguments.values`), apart from the call | \(result.checkJSON.summary(1)) |")
        print("| the same from typed Swift values | \(result.checkTyped.summary(1)) |")
        print("| a whole composer action through the registry (`demo.rating.create`: check, call, decode, envelope) | \(result.compose.summary(0)) |")
        print("")
    }
}
