"""How a node process runs, whatever it computes: the plumbing the four processes share.

Parameter tables read and checked without ROS (`node_params`), the rclpy start-up, spin and
shutdown around them (`ros_node`, rclpy imported inside its functions only), absolute-deadline
pacing of fixed-rate loops and their timing statistics (`control_loop`), and real-time scheduling
with garbage-collector freezing (`realtime`). Import each module by its full path.
"""
