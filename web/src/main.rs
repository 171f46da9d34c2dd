//! The web app's entry point (trunk builds this binary).

fn main() {
    kubesim_web::start();
}
