fn main() -> std::process::ExitCode {
    let cfg = chain_node::node::Config::from_args();
    std::process::ExitCode::from(chain_node::node::run(cfg) as u8)
}
