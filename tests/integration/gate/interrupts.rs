//! Ctrl-C while the judge or a server hangs: INVALID, and nothing left running.

use super::*;

#[test]
#[cfg(target_os = "linux")] // process states are read from /proc
fn ctrl_c_while_the_judge_hangs_is_invalid_and_leaves_nothing_running() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    let mut hang = tool_rule("close_issue", Some(WORSE), None, 2);
    hang["behaviour"] = json!("hang");
    setup.fake.control(script(vec![hang]));
    let before = setup.repo.snapshot();
    let tmp = setup.work().join("tmp-interrupted");
    std::fs::create_dir_all(&tmp).unwrap();
    let report_dir = setup.work().join("report").display().to_string();
    let args = setup.gate_args(&["--report-dir", &report_dir]);
    let running = Running::spawn(setup.command(&args, &tmp), setup.work().join("report"));
    let gate_pid = running.pid;
    let hung = wait_for(Duration::from_secs(60), || {
        setup.fake.calls().iter().any(|c| c["behaviour"] == "hang")
    });
    assert!(hung, "the fake never hung: {:?}", setup.fake.log());
    let record = setup
        .fake
        .calls()
        .into_iter()
        .find(|c| c["behaviour"] == "hang")
        .unwrap();
    let fake_pid = record["pid"].as_i64().unwrap();
    let fake_group = record["pgid"].as_i64().unwrap();
    let helper = record["helper_pid"].as_i64().unwrap();
    assert!(alive(fake_pid) && alive(helper));

    let run = running.interrupt();
    run.assert_code(2);
    assert!(
        run.stderr.contains("INVALID: interrupted"),
        "{}",
        run.describe()
    );
    // The gate signals what it started before it exits; dying takes the kernel a moment (a
    // generous bound, for a loaded machine: the poll ends as soon as they are gone).
    let gone = wait_for(Duration::from_secs(30), || {
        !alive(fake_pid) && !alive(helper) && group_members(fake_group).is_empty()
    });
    assert!(
        gone,
        "left running: fake {} helper {} group {:?}",
        alive(fake_pid),
        alive(helper),
        group_members(fake_group)
    );
    assert_eq!(group_members(gate_pid), Vec::<i64>::new());
    setup.assert_left_nothing(&before, &tmp, &run);
}

#[test]
#[cfg(target_os = "linux")] // process states are read from /proc
fn ctrl_c_while_a_server_hangs_is_invalid_and_leaves_nothing_running() {
    let setup = Setup::new(&base_tools());
    let pids = setup.work().join("pids");
    std::fs::create_dir_all(&pids).unwrap();
    // A server that starts a child, records both pids and never answers.
    setup.repo.write(
        "hang.py",
        "import os, subprocess, sys, time\n\
         child = subprocess.Popen(['sleep', '3600'])\n\
         path = os.path.join(sys.argv[1], str(os.getpid()))\n\
         open(path + '.tmp', 'w').write('%d %d' % (os.getpid(), child.pid))\n\
         os.rename(path + '.tmp', path)\n\
         time.sleep(3600)\n",
    );
    setup.repo.commit_all("a hanging server");
    let before = setup.repo.snapshot();
    let tmp = setup.work().join("tmp-interrupted");
    std::fs::create_dir_all(&tmp).unwrap();
    let command = format!("python3 {{root}}/hang.py {}", pids.display());
    let report_dir = setup.work().join("report").display().to_string();
    // The servers write their pids into the test's folder, outside any sandbox's view: what is
    // tested here is the gate's own clean-up.
    let args = setup.gate_args(&[
        "--command",
        &command,
        "--sandbox",
        "off",
        "--report-dir",
        &report_dir,
    ]);
    let running = Running::spawn(setup.command(&args, &tmp), setup.work().join("report"));
    let gate_pid = running.pid;
    // Both sides' servers run at once.
    let processes = crate::support::wait_for_pids(&pids, 2, Duration::from_secs(60))
        .unwrap_or_else(|| panic!("the servers did not start"));
    assert!(processes.iter().all(|p| alive(*p)));
    let run = running.interrupt();
    run.assert_code(2);
    assert!(
        run.stderr.contains("INVALID: interrupted"),
        "{}",
        run.describe()
    );
    let gone = wait_for(Duration::from_secs(30), || {
        processes.iter().all(|p| !alive(*p))
    });
    let survivors: Vec<i64> = processes.into_iter().filter(|p| alive(*p)).collect();
    assert!(gone, "server processes survived: {survivors:?}");
    assert_eq!(group_members(gate_pid), Vec::<i64>::new());
    assert!(setup.fake.calls().is_empty(), "{:?}", setup.fake.log());
    setup.assert_left_nothing(&before, &tmp, &run);
}
