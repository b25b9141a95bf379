//! `storlab plan search`: the Pareto-optimal designs for a drive model and count.

use super::*;

#[derive(Args, Debug)]
pub(super) struct SearchArgs {
    #[command(flatten)]
    choice: storlab_plan::spec::SearchChoice,
    #[command(flatten)]
    out: DocOutputArgs,
}

pub(super) fn search(a: SearchArgs) -> Result<Reply> {
    let cat = load_catalog(&a.choice.catalogs)?;
    let doc = storlab_plan::workflow::search(&a.choice, &cat, a.choice.top)?;
    let none = doc.none_found();
    let mut reply = Reply::doc(Shown(doc), a.out.rendering());
    if let Some(why) = none {
        eprintln!("storlab: {why}");
        reply.outcome = crate::Outcome::Failed;
    }
    Ok(reply)
}
