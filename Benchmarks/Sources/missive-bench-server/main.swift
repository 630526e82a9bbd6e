import Foundation
import ServerLoad

// `missive-bench-server [--server-seconds S] [--server-rate N] [--runs N] [--server-store sqlite|URL] [--server-drain S]
// [--server-client-threads N] [--server-only missive|floor] [--server-instances 1|2] [--work DIR]`: the server load section of missive-bench
// (`missive-bench --only server`) on its own, in an executable that builds without the rest of the benchmark (no
// swift-syntax, swift-protobuf or simdjson), for a quicker build. It takes the same options.
do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    switch arguments.first {
    case "server-child": try await ServerLoad.missiveChild(Array(arguments.dropFirst()))
    case "floor-child": try await ServerLoad.floorChild(Array(arguments.dropFirst()))
    default:
        var options = ServerLoad.Options()
        var work = NSTemporaryDirectory() + "missive-bench"
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--runs": options.runs = iterator.next().flatMap(Int.init) ?? options.runs
            case "--work": work = iterator.next() ?? work
            case "--only": _ = iterator.next()
            default:
                if !options.parse(argument, next: iterator.next()) {
                    FileHandle.standardError.write(Data("missive-bench-server: ignoring \(argument)\n".utf8))
                }
            }
        }
        options.work = work + "/server"
        try await ServerLoad.run(options, executable: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    }
} catch {
    FileHandle.standardError.write(Data("missive-bench-server: \(error)\n".utf8))
    exit(1)
}
