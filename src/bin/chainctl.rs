fn main() -> std::process::ExitCode {
    chain_node::chainctl::main()
}
