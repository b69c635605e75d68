#!/usr/bin/gjs
// A SubagentRunner written in JavaScript (gjs), hosted from JavaScript:
// the runner answers from the task and its definition; the host runs one
// child through the manager and prints the result object as JSON.
//
// Run from a build tree:
//   GI_TYPELIB_PATH=build/framework LD_LIBRARY_PATH=build/framework \
//     gjs examples/gjs-runner.js ROOT [TASK]
imports.gi.versions.Subagent = '1.0';
const {GLib, GObject, Json, Subagent} = imports.gi;

const EchoRunner = GObject.registerClass({
    Implements: [Subagent.Runner],
}, class EchoRunner extends GObject.Object {
    // JavaScript runs on the main thread only, and gjs cannot implement a
    // vfunc that takes a callback: `start` gets the GTask to complete, on
    // the caller's thread; the default run_finish takes the outcome from
    // task.return_value().
    vfunc_start(context, task) {
        const name = context.get_definition().get_name();
        const outcome = Subagent.RunOutcome.new('complete', 1, 0, 0.0,
            `${name} from gjs: ${context.get_task()}`, '', '');
        GLib.idle_add(GLib.PRIORITY_DEFAULT, () => {
            task.return_value(outcome);
            return GLib.SOURCE_REMOVE;
        });
    }
});

const root = ARGV[0] ?? GLib.get_current_dir();
const task = ARGV[1] ?? 'hello from gjs';

const manager = Subagent.Manager.new(root);
manager.set_runner(new EchoRunner());
manager.set_approval_sink(Subagent.MemoryApprovalSink.new());
const options = Subagent.RunOptions.new();
options.set_isolation('shared');

const loop = new GLib.MainLoop(null, false);
let result = null;
manager.run_async(task, options, null, (source, res) => {
    result = source.run_finish(res);
    loop.quit();
});
loop.run();

const node = Json.Node.alloc().init_object(result.to_json());
print(Json.to_string(node, true));
imports.system.exit(result.get_status() === Subagent.RunStatus.COMPLETE ? 0 : 1);
