fn main() -> std::process::ExitCode {
    chain_node::keytool::main()
}
