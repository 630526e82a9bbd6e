// The child process of PluginScanner: `missive-plugin-scanner PLUGIN-FILE RESULT-FILE` loads one plugin and
// runs its examples, writing each step to the result file before it runs, so that the parent can name the
// step a crash happened in. Hosts install it beside their own executable; see PluginScanner.
import Foundation
import Missive

exit(PluginScanner.runScan(arguments: Array(CommandLine.arguments.dropFirst())))
