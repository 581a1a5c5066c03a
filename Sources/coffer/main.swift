import CofferCLI

// `coffer`: the everyday commands in a small process; everything else in `coffer-full` (see EverydayCommands).
let arguments = Array(CommandLine.arguments.dropFirst())
EverydayCommands.runIfEveryday(arguments)
FullCommandLine.replaceProcess(arguments: arguments)
