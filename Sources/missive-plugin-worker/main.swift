// The worker process of an isolated plugin: `missive-plugin-worker PLUGIN-FILE [--memory BYTES] [--no-filter]` loads
// one plugin under resource limits and a seccomp filter and answers the host on descriptor 3 (see PluginIsolation and
// docs/PROTECTION.md). Hosts install it beside their own executable.
import Foundation
import Missive

exit(PluginIsolation.runWorker(arguments: Array(CommandLine.arguments.dropFirst())))
