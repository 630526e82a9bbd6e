import Foundation
@_spi(Benchmarks) import Missive

/// Actions: one call of a plugin's action function through `ffi_call` with its cached call interface,
/// against a direct call of the same C function through a typed pointer, for signatures of 2, 4 and 6
/// parameters; libffi's own cost, measured from C in the same run, so that what Missive adds shows apart;
/// and what checking and converting JSON arguments costs.
enum Actions {
    /// Calls per run of each loop.
    static let calls = Int(ProcessInfo.processInfo.environment["MISSIVE_BENCH_ACTION_CALLS"] ?? "") ?? 1_000_000

    /// The benchmark's actions: a composer action per signature, whose function does a few operations on its
    /// arguments and returns MISSIVE_OK without writing, so that the call is what is measured.
    struct Shape {
        let id: String
        let symbol: String
        let signature: String
        /// The arguments, as JSON.
        let arguments: [String]
    }

    static let shapes = [
        Shape(id: "bench.two", symbol: "bench_two", signature: "int32(int32 a, sink out)", arguments: ["7"]),
        Shape(id: "bench.four", symbol: "bench_four", signature: "int32(int32 a, int64 b, string e, sink out)", arguments: ["7", "-42", #""hello""#]),
        Shape(id: "bench.six", symbol: "bench_six", signature: "int32(int32 a, int64 b, double c, bool d, string e, sink out)",
              arguments: ["7", "-42", "2.5", "true", #""hello""#]),
    ]

    /// Each function as a typed pointer: what a direct call uses.
    typealias Two = @convention(c) (Int32, UnsafeRawPointer?) -> Int32
    typealias Four = @convention(c) (Int32, Int64, UnsafePointer<CChar>?, UnsafeRawPointer?) -> Int32
    typealias Six = @convention(c) (Int32, Int64, Double, Bool, UnsafePointer<CChar>?, UnsafeRawPointer?) -> Int32
    /// `bench_ffi_loop(shape, calls)`: libffi alone, called from C with a prepared cif, in ns per call.
    typealias FFILoop = @convention(c) (Int32, Int64) -> Double

    struct Result {
        var direct: [Samples] = Array(repeating: Samples(values: []), count: 3)
        var ffi: [Samples] = Array(repeating: Samples(values: []), count: 3)
        var libffi: [Samples] = Array(repeating: Samples(values: []), count: 3)
        var checkJSON = Samples(values: [])
        var checkTyped = Samples(values: [])
        var compose = Samples(values: [])
    }

    /// Builds `libbenchactions.so` into `directory` (once), linked with libffi for its C loop.
    static func generatePlugin(into directory: String, header: String) throws {
        let library = directory + "/libbenchactions.so"
        if FileManager.default.fileExists(atPath: library) { return }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let metadata = shapes.map { shape in
            #"MISSIVE_METADATA_COMPOSER_ACTION("\#(shape.id)", "bench:actions", "Call", "bolt", 0, "\#(shape.signature)", "\#(shape.symbol)");"#
        }.joined(separator: "\n")
        let descriptors = shapes.map { shape in
            #"{.struct_size = sizeof(missive_action), .kind = MISSIVE_ACTION_COMPOSER, .id = "\#(shape.id)", .object_name = "bench:actions", .title = "Call", .icon = "bolt", .signature = "\#(shape.signature)", .symbol = "\#(shape.symbol)"}"#
        }.joined(separator: ",\n    ")
        let source = """
            #include <ffi.h>
            #include <stdbool.h>
            #include <string.h>
            #include <time.h>
            #include "missive_plugin.h"
            MISSIVE_METADATA_PLUGIN("BenchActions", "1.0.0", "Missive Benchmarks");
            MISSIVE_METADATA_TYPE("bench:actions", MISSIVE_PERSISTENCE_COUNTED, 0);
            \(metadata)
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
            MISSIVE_EXPORT int32_t bench_two(int32_t a, const missive_sink *out) {
                (void)out;
                return a == 0x7fffffff ? MISSIVE_FAILED : MISSIVE_OK;
            }
            MISSIVE_EXPORT int32_t bench_four(int32_t a, int64_t b, const char *e, const missive_sink *out) {
                (void)out;
                return (a ^ (int32_t)b ^ e[0]) == 0x7fffffff ? MISSIVE_FAILED : MISSIVE_OK;
            }
            MISSIVE_EXPORT int32_t bench_six(int32_t a, int64_t b, double c, bool d, const char *e, const missive_sink *out) {
                (void)out;
                return (a ^ (int32_t)b ^ (int32_t)c ^ (int32_t)d ^ e[0]) == 0x7fffffff ? MISSIVE_FAILED : MISSIVE_OK;
            }
            /* libffi alone: `calls` ffi_call of one function with a cif prepared before the loop, from C. */
            MISSIVE_EXPORT double bench_ffi_loop(int32_t shape, int64_t calls) {
                ffi_type *types[6] = {&ffi_type_sint32, &ffi_type_sint64, &ffi_type_double, &ffi_type_uint8, &ffi_type_pointer, &ffi_type_pointer};
                ffi_type *four[4] = {&ffi_type_sint32, &ffi_type_sint64, &ffi_type_pointer, &ffi_type_pointer};
                ffi_type *two[2] = {&ffi_type_sint32, &ffi_type_pointer};
                int32_t a = 7; int64_t b = -42; double c = 2.5; uint8_t d = 1; const char *e = "hello"; const void *out = &a;
                void *six_values[6] = {&a, &b, &c, &d, &e, &out}, *four_values[4] = {&a, &b, &e, &out}, *two_values[2] = {&a, &out};
                ffi_cif cif;
                void (*function)(void);
                void **values;
                if (shape == 2) { ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint32, two); function = FFI_FN(bench_two); values = two_values; }
                else if (shape == 4) { ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 4, &ffi_type_sint32, four); function = FFI_FN(bench_four); values = four_values; }
                else { ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 6, &ffi_type_sint32, types); function = FFI_FN(bench_six); values = six_values; }
                struct timespec start, end;
                long sum = 0;
                clock_gettime(CLOCK_MONOTONIC, &start);
                for (int64_t i = 0; i < calls; i++) { ffi_arg r; ffi_call(&cif, function, &r, values); sum += (int32_t)r; }
                clock_gettime(CLOCK_MONOTONIC, &end);
                return sum == 1 ? 0 : ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / (double)calls;
            }
            static const missive_action actions[] = {
                \(descriptors)
            };
            static const missive_action *const pointers[] = {&actions[0], &actions[1], &actions[2]};
            static const missive_actions_v1 extension = {sizeof(missive_actions_v1), 3, pointers};
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
        compiler.arguments = ["cc", "-O2", "-shared", "-fPIC", "-I", header, file, "-o", library, "-lffi"]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else { throw BenchError("cc failed for the actions plugin") }
    }

    /// Times each loop `runs` times (plus a warm-up), in nanoseconds per call.
    static func measure(directory: String, samples: MessageRegistry, runs: Int) throws -> Result {
        let discovery = MessageRegistry.discover(searchPath: PluginSearchPath(entries: [.init(directory: directory, source: .explicit)]))
        let registry = discovery.registry
        let actions = try shapes.map { shape in
            guard let action = registry.composerActions.first(where: { $0.id == shape.id }) else {
                throw BenchError("the actions plugin did not load: \(discovery.rejections)")
            }
            return action
        }
        let functions = try actions.map { try registry.function(of: $0) }
        let values = try zip(shapes, actions).map { shape, action in try ActionArgumentChecker.values(shape.arguments.map { ActionArgument(json: $0) }, for: action) }
        guard let loopAddress = dlsym(dlopen(directory + "/libbenchactions.so", RTLD_NOW | RTLD_LOCAL), "bench_ffi_loop") else {
            throw BenchError("bench_ffi_loop is missing")
        }
        let libffiLoop = unsafeBitCast(loopAddress, to: FFILoop.self)
        let two = unsafeBitCast(functions[0].address, to: Two.self)
        let four = unsafeBitCast(functions[1].address, to: Four.self)
        let six = unsafeBitCast(functions[2].address, to: Six.self)
        let json = shapes[2].arguments.map { ActionArgument(json: $0) }
        let typed: [ActionArgument] = [7, -42, 2.5, true, "hello"]
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
            let direct = [
                perCall {
                    var sum = 0
                    for index in 0..<calls { sum &+= Int(two(Int32(truncatingIfNeeded: index), sink)) }
                    return sum
                },
                perCall {
                    var sum = 0
                    for index in 0..<calls { sum &+= Int(four(Int32(truncatingIfNeeded: index), -42, text, sink)) }
                    return sum
                },
                perCall {
                    var sum = 0
                    for index in 0..<calls { sum &+= Int(six(Int32(truncatingIfNeeded: index), -42, 2.5, true, text, sink)) }
                    return sum
                },
            ]
            let ffi = (0..<3).map { shape in
                let function = functions[shape], arguments = values[shape], sink = UnsafeRawPointer(sink)
                return perCall {
                    var sum = 0
                    for _ in 0..<calls { sum &+= Int(function.call(message: nil, values: arguments, sink: sink)) }
                    return sum
                }
            }
            let libffi = [2, 4, 6].map { libffiLoop(Int32($0), Int64(calls)) }
            let jsonTime = perCall { (0..<calls).reduce(0) { sum, _ in sum &+ ((try? ActionArgumentChecker.values(json, for: actions[2]).count) ?? 0) } }
            let typedTime = perCall { (0..<calls).reduce(0) { sum, _ in sum &+ ((try? ActionArgumentChecker.values(typed, for: actions[2]).count) ?? 0) } }
            // A whole composer action through the registry, for scale: 1/100 of the calls.
            var composeTime = 0.0
            if let rate {
                composeTime = perCall {
                    (0..<(calls / 100)).reduce(0) { sum, _ in
                        sum &+ ((try? samples.compose(action: rate.id, arguments: [4, "Nice"], conversationID: "c", senderID: "s", id: "x", sentAt: 0))?
                            .envelope.content.count ?? 0)
                    }
                } * 100
            }
            if run == 0 { continue }
            for shape in 0..<3 {
                result.direct[shape].values.append(direct[shape])
                result.ffi[shape].values.append(ffi[shape])
                result.libffi[shape].values.append(libffi[shape])
            }
            result.checkJSON.values.append(jsonTime)
            result.checkTyped.values.append(typedTime)
            result.compose.values.append(composeTime)
        }
        return result
    }

    static func report(_ result: Result) {
        print("## Actions: \(calls) calls of one C function per signature\n")
        print("| signature | direct call, ns | Missive: `ffi_call` on the cached cif, ns | over direct, ns | libffi alone from C, ns | Missive over libffi alone, ns |")
        print("|---|---|---|---|---|---|")
        for (index, shape) in shapes.enumerated() {
            let direct = result.direct[index], ffi = result.ffi[index], libffi = result.libffi[index]
            print("| `\(shape.signature)` | \(direct.summary(1)) | \(ffi.summary(1)) | **\(format(ffi.median - direct.median, 1))** | "
                + "\(libffi.summary(1)) | \(format(ffi.median - libffi.median, 1)) |")
        }
        print("")
        print("| argument check and conversion, apart from the call | ns per call, median (min–max) |")
        print("|---|---|")
        print("| 5 JSON arguments as written (`ActionArgumentChecker.values`) | \(result.checkJSON.summary(1)) |")
        print("| the same from typed Swift values | \(result.checkTyped.summary(1)) |")
        print("| a whole composer action through the registry (`demo.rating.create`: check, call, decode, envelope) | \(result.compose.summary(0)) |")
        print("")
    }
}
