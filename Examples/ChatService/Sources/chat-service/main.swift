import ChatService
import Logging
import Missive
import MissiveServer

// The chat's messages and accounts in ./chat-data, every plugin on the standard search path, on port 8080.
let logger = Logger(label: "chat-service")
var types = MessageRegistry.Builder()
logger.info("plugins: \(types.discoverPlugins(logger: logger))")
let chat = try await ChatServer.open(configuration: ServerConfiguration(dataDirectory: "chat-data"), registry: types.build(), logger: logger)
try await buildApplication(chat: chat, logger: logger).runService()
