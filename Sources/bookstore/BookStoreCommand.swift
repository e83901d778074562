import ArgumentParser

@main
struct BookStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bookstore", abstract: "The BookStore backend.")
}
